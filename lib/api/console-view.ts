// The console's operator pages are sent as prerendered shells that read what they show from these
// JSON views (docs/ARCHITECTURE.md, "What a page view asks of the server"). A view route authorizes
// like every console route (Z1, Z4), builds its view from the read models with the viewer's scope,
// and answers it beside the navigation's data (who is signed in, the unread count), so that a page
// costs one request.
import { consoleRoute } from './console-route.ts';
import type { Guarded } from '@/lib/auth/guard.ts';
import { LedgerError } from '@/lib/core/errors.ts';
import { searchParamsOf, type SP } from '@/lib/read-models/views/query.ts';
import { navViewer, type ConsoleViewer } from '@/lib/read-models/views/viewer.ts';

/** What a view is built with: the viewer, and where the request came from (A1: where), for a view
 *  whose read is itself recorded on the trail (the audit trail's). */
export type ViewReader = ConsoleViewer & Pick<Guarded, 'request'>;

export function consoleViewRoute<P extends Record<string, string>>(
  subject: string,
  build: (viewer: ViewReader, params: P, sp: SP) => Promise<object | null>,
): (req: Request, ctx: { params: Promise<P> }) => Promise<Response> {
  return consoleRoute<{ params: Promise<P> }>('console.read', { mutating: false }, async (g, req, ctx) => {
    const params = await ctx.params;
    const sp = searchParamsOf(new URL(req.url).searchParams);
    const [view, viewer] = await Promise.all([build(g, params, sp), navViewer(g.db, g.user)]);
    // Missing, or outside the viewer's scope: the same answer for both (Z1).
    if (view === null) throw new LedgerError('not_found', `no ${subject}`);
    return Response.json({ viewer, view }, { headers: { 'cache-control': 'no-store' } });
  });
}
