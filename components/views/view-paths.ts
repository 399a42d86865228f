// The console pages sent as prerendered shells over a JSON view (next.config.js rewrites the
// per-run ones to their shell). Their view answer carries the navigation's data; on any other page
// the navigation asks for it itself.
const VIEW_PATHS = [/^\/runs\/[^/]+$/];

export const isViewPath = (pathname: string): boolean => VIEW_PATHS.some((p) => p.test(pathname));

/** The run id of a per-run page's address (/runs/<id>, /runs/<id>/plan, /runs/<id>/replay). */
export function runIdOf(pathname: string): string {
  const segment = pathname.split('/')[2] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
