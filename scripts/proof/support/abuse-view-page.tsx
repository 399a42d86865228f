// The operator pages are prerendered shells that draw a JSON view (components/views/). For the
// rendering proofs such a page is its view route and the component that draws the answer: the route
// handler is called with the render's cookie as a browser would call it, and its answer is drawn by the
// same component the shell uses. A 404 answer is the page's not-found card, counted as Next's
// not-found page is.
import type { ReactElement } from 'react';
import { headers } from 'next/headers';
import { HOST } from './abuse-env.ts';

type SP = Record<string, string | string[] | undefined>;
type Params = Record<string, string>;
// Typed loosely: each view route names its own path parameters.
type ViewRoute = { GET: (req: Request, ctx: { params: Promise<never> }) => Promise<Response> };
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each body names its own props
type ViewBody = (props: any) => ReactElement;
type PageModule = {
  default: (props: { params: Promise<Params>; searchParams: Promise<SP> }) => Promise<ReactElement>;
};

/** The view route's address with the page's search parameters (the route reads them from it; the
 *  path's parameters reach it as the handler's params, as Next passes them). */
function viewUrl(sp: SP): string {
  const query = new URLSearchParams(
    Object.entries(sp).flatMap(([k, v]) =>
      v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => [k, x] as [string, string]),
    ),
  );
  return `http://${HOST}/api/console/views?${query.toString()}`;
}

export async function viewPage(routeModule: Promise<ViewRoute>, body: Promise<ViewBody>): Promise<PageModule> {
  const [{ GET }, Body] = await Promise.all([routeModule, body]);
  return {
    default: async ({ params, searchParams }) => {
      const [p, sp] = await Promise.all([params, searchParams]);
      const url = viewUrl(sp);
      // The cookie of the render (renderPage puts it in the request scope, as a browser sends it).
      const cookie = (await headers()).get('cookie') ?? '';
      const res = await GET(new Request(url, { headers: { host: HOST, cookie } }), {
        params: Promise.resolve(p as never),
      });
      if (res.status === 404) throw Object.assign(new Error('not found'), { digest: 'NEXT_HTTP_ERROR_FALLBACK;404' });
      const answer = (await res.json()) as { view?: unknown; detail?: string };
      if (!res.ok || !answer.view) throw new Error(`view answered ${res.status}: ${answer.detail ?? ''}`);
      return <Body view={answer.view as never} sp={sp} {...p} />;
    },
  };
}
