// The console pages sent as prerendered shells over a JSON view (next.config.js rewrites the
// per-run ones to their shell). Their view answer carries the navigation's data; on any other page
// the navigation asks for it itself.
// A per-run page is a shell only for a well-formed run id (next.config.js); any other is the 404 page.
const RUN_ID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const VIEW_PATHS = [
  /^\/runs$/,
  new RegExp(`^/runs/${RUN_ID}$`),
  new RegExp(`^/runs/${RUN_ID}/(plan|replay)$`),
  /^\/support$/,
  /^\/audit$/,
];

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

/** The view a shell's address reads (/runs/<id>/plan?x=1 -> /api/console/views/plan/<id>?x=1), or
 *  null for a page that is not a view. */
export function viewAddressOf(address: string): string | null {
  const [pathname = '', search = ''] = address.split(/\?(.*)/s);
  if (!isViewPath(pathname)) return null;
  const [, first, segment, sub] = pathname.split('/');
  const name = first === 'runs' ? (segment ? (sub ?? 'run') : 'runs') : first;
  // The id as one path segment, however the address spelled it (escaped or not).
  const runId = segment ? `/${encodeURIComponent(runIdOf(pathname))}` : '';
  return `/api/console/views/${name}${runId}${search ? `?${search}` : ''}`;
}
