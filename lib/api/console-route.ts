// A console route handler (Z2): authorized by the guard where it runs, errors mapped to HTTP in one
// place (./problem.ts). HTTP belongs here, in lib/api; the guard itself (lib/auth/guard.ts) knows
// nothing of responses.
import { authorize, type Guarded } from '../auth/guard.ts';
import { leaveFor } from '../auth/leave-for.ts';
import type { Permission } from '../core/permissions.ts';
import { requestInfoFromHeaders } from '../auth/request.ts';
import { problemFrom, problemResponse } from './problem.ts';

/** A console route handler: authorized, errors mapped to HTTP in one place. With `signInFirst`, a
 *  person who is not signed in and opened the route as a page (a link in an email) is sent to sign in
 *  and brought back, instead of getting a 401 document. */
export function consoleRoute<C = unknown>(
  permission: Permission,
  options: { mutating: boolean; allowUserNavigation?: boolean; signInFirst?: boolean },
  handler: (g: Guarded, req: Request, ctx: C) => Promise<Response>,
): (req: Request, ctx: C) => Promise<Response> {
  return async (req, ctx) => {
    const info = requestInfoFromHeaders(req.headers);
    try {
      const g = await authorize(info, permission, options);
      return await handler(g, req, ctx);
    } catch (error) {
      const problem = problemFrom(error);
      if (
        options.signInFirst &&
        problem.code === 'unauthenticated' &&
        req.headers.get('sec-fetch-mode') === 'navigate'
      ) {
        const back = new URL(req.url).pathname;
        const location = leaveFor({ status: 401 }, back);
        return new Response(null, { status: 303, headers: { location, 'cache-control': 'no-store' } });
      }
      return problemResponse(problem);
    }
  };
}
