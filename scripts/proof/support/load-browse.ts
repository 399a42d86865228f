// Load, row 2: signed-in console sessions browsing over real HTTP. Shared by the full-scale part
// (fetch against its own `next start`) and the browser suite (tests/e2e/zz-console-load.spec.ts, with
// Playwright's request contexts against the e2e server): a session is anything that can GET a path
// without following redirects.
//
// Every response is judged: a page counts as served only with status 200 and its page-specific
// marker in the HTML (so an error boundary rendered with 200, or a redirect to /sign-in because the
// session was lost, is a failure). Anonymous probes (no cookie) of the same pages must be sent to
// /sign-in; a page served to one counts as unauthorized. A page sent as a prerendered shell over a
// JSON view (components/views/) is two requests, timed together as one page view: the shell (the
// same for everyone) and its view, where the markers are looked for and which an anonymous probe
// must be refused.

import { viewUrl } from '@/components/views/fetch-view.ts';

export interface HttpResult {
  status: number;
  location: string | null;
  body: string;
}

export interface Session {
  label: string;
  /** GETs `path` with the session's cookie, plus `headers` when given. */
  get(path: string, headers?: Record<string, string>): Promise<HttpResult>;
}

export interface PageKind {
  kind: string;
  /** The i-th request of this kind (lets deep pages and filters vary). */
  path(i: number): string;
  /** Each must occur in the HTML of a correctly served page. */
  markers(i: number): string[];
  /** Must not occur (e.g. a row of another state in a state filter). */
  forbidden?(i: number): string[];
  /** Request headers this kind sends (a link prefetch's, for one). */
  headers?: Record<string, string>;
  /** A prerendered shell over a JSON view: its view is asked for too, and holds the markers. */
  shell?: boolean;
}

/** The view behind a shell's address: /runs, /support, /audit, and a run's /runs/<id>[/plan|/replay]
 *  (components/views/fetch-view.ts names them). */
function viewOf(page: PageKind, i: number): string {
  const [pathname = '', query = ''] = page.path(i).split(/\?(.*)/s);
  const [, first, runId, sub] = pathname.split('/');
  if (first === 'runs' && runId) return viewUrl(sub ?? 'run', decodeURIComponent(runId), query);
  if (first === 'runs' || first === 'support' || first === 'audit') return viewUrl(first, null, query);
  throw new Error(`${page.kind}: ${page.path(i)} is not a console view`);
}

/** One page view: the page, and for a shell its view too (what a browser asks for before it shows it). */
export async function getPage(session: Session, page: PageKind, i: number): Promise<HttpResult> {
  const res = await session.get(page.path(i), page.headers);
  if (!page.shell || res.status !== 200) return res;
  const view = await session.get(viewOf(page, i), { accept: 'application/json' });
  return view;
}

/** What an anonymous probe of a page asks for: the view behind a shell (the shell is public). */
const probePath = (page: PageKind, i: number) => (page.shell ? viewOf(page, i) : page.path(i));
/** A probe is served when it got the page: a view answered, or a page that did not send it to sign in. */
const probeServed = (page: PageKind, anon: HttpResult) =>
  page.shell ? anon.status === 200 : anon.status === 200 || !(anon.location ?? '').includes('/sign-in');

export interface Failure {
  kind: string;
  path: string;
  status: number;
  why: string;
}

export interface BrowseStats {
  requests: number;
  served: number;
  failures: Failure[];
  /** By status class, for the report. */
  statuses: Record<string, number>;
  anonymousProbes: number;
  anonymousServed: number;
  perKind: Record<string, { n: number; p50: number; p95: number; max: number }>;
  seconds: number;
}

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : 0;
}

export function judge(page: PageKind, i: number, res: HttpResult): string | null {
  if (res.status !== 200) return res.location ? `${res.status} to ${res.location}` : `status ${res.status}`;
  const missing = page.markers(i).find((m) => !res.body.includes(m));
  if (missing) return `marker missing: ${missing}`;
  const wrong = page.forbidden?.(i).find((m) => res.body.includes(m));
  if (wrong) return `unexpected content: ${wrong}`;
  return null;
}

/**
 * Every session requests pages in turn (each session starts at a different page kind and walks the
 * list round-robin), one request at a time per session, no think time: the closed-loop worst case
 * for `sessions.length` people. Stops starting new requests when `keepGoing()` turns false (or after
 * `rounds` requests per session). Every `anonymousEvery`-th request of a session is followed by the
 * same page without a cookie, which must redirect to /sign-in.
 */
export async function browse(options: {
  sessions: Session[];
  pages: PageKind[];
  keepGoing?: () => boolean;
  /** Start no new request this long after the timed phase began (after the warm-up). */
  durationMs?: number;
  rounds?: number;
  anonymous?: Session;
  anonymousEvery?: number;
  /** First request each page kind once from the first session (judged and counted, not timed):
   *  a fresh `next start` loads each route's code on its first request. */
  warmUp?: boolean;
  /** Pause after each response before the session's next request (a person reading); 0 = closed loop. */
  thinkMs?: number;
  log?: (line: string) => void;
}): Promise<BrowseStats> {
  const { sessions, pages } = options;
  const latencies = new Map<string, number[]>(pages.map((p) => [p.kind, []]));
  const stats: BrowseStats = {
    requests: 0,
    served: 0,
    failures: [],
    statuses: {},
    anonymousProbes: 0,
    anonymousServed: 0,
    perKind: {},
    seconds: 0,
  };
  const counters = new Map<string, number>();
  const count = (status: number) => {
    const cls = status === 0 ? 'network error' : `${Math.floor(status / 100)}xx`;
    stats.statuses[cls] = (stats.statuses[cls] ?? 0) + 1;
  };
  if (options.warmUp && sessions[0]) {
    for (const page of pages) {
      const path = page.path(0);
      stats.requests++;
      const res = await getPage(sessions[0], page, 0).catch((error: Error) => ({
        status: 0,
        location: null,
        body: error.message,
      }));
      count(res.status);
      const why = res.status === 0 ? `network: ${res.body}` : judge(page, 0, res);
      if (why) stats.failures.push({ kind: page.kind, path, status: res.status, why: `warm-up: ${why}` });
      else stats.served++;
    }
  }
  const started = performance.now();
  let lastLog = started;
  await Promise.all(
    sessions.map(async (session, s) => {
      for (let n = 0; ; n++) {
        if (options.rounds !== undefined && n >= options.rounds) break;
        if (options.keepGoing && !options.keepGoing()) break;
        if (options.durationMs !== undefined && performance.now() - started > options.durationMs) break;
        const page = pages[(s + n) % pages.length]!;
        const i = counters.get(page.kind) ?? 0;
        counters.set(page.kind, i + 1);
        const path = page.path(i);
        const t0 = performance.now();
        let res: HttpResult;
        try {
          res = await getPage(session, page, i);
        } catch (error) {
          res = { status: 0, location: null, body: '' };
          stats.failures.push({ kind: page.kind, path, status: 0, why: `network: ${(error as Error).message}` });
        }
        const ms = performance.now() - t0;
        stats.requests++;
        count(res.status);
        if (res.status !== 0) {
          const why = judge(page, i, res);
          if (why) stats.failures.push({ kind: page.kind, path, status: res.status, why });
          else {
            stats.served++;
            latencies.get(page.kind)!.push(ms);
          }
        }
        if (options.anonymous && (n + 1) % (options.anonymousEvery ?? 20) === 0) {
          stats.anonymousProbes++;
          const anon = await options.anonymous.get(probePath(page, i)).catch(() => null);
          if (anon && probeServed(page, anon)) stats.anonymousServed++;
        }
        if (options.thinkMs) await new Promise((resolve) => setTimeout(resolve, options.thinkMs));
        if (options.log && performance.now() - lastLog > 15_000) {
          lastLog = performance.now();
          options.log(
            `console load: ${stats.requests} requests, ${stats.failures.length} failed, ${((lastLog - started) / 1000).toFixed(0)} s`,
          );
        }
      }
    }),
  );
  stats.seconds = (performance.now() - started) / 1000;
  for (const [kind, list] of latencies) {
    list.sort((a, b) => a - b);
    stats.perKind[kind] = {
      n: list.length,
      p50: pct(list, 0.5),
      p95: pct(list, 0.95),
      max: list[list.length - 1] ?? 0,
    };
  }
  return stats;
}

export function describeBrowse(stats: BrowseStats): string {
  const kinds = Object.entries(stats.perKind)
    .map(([k, v]) => `${k} p50 ${Math.round(v.p50)} / p95 ${Math.round(v.p95)} ms (n ${v.n})`)
    .join('; ');
  const statuses = Object.entries(stats.statuses)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const firstFailures = stats.failures
    .slice(0, 3)
    .map((f) => `${f.kind} ${f.path}: ${f.why}`)
    .join(' | ');
  return (
    `${stats.requests} page requests in ${stats.seconds.toFixed(0)} s (${(stats.requests / Math.max(stats.seconds, 0.001)).toFixed(1)}/s), ` +
    `${stats.served} served correctly, ${stats.failures.length} error responses (${statuses})` +
    `${firstFailures ? ` [first: ${firstFailures}]` : ''}; ${stats.anonymousProbes} anonymous probes, ${stats.anonymousServed} served a page; ${kinds}`
  );
}

/** A session over fetch holding a cookie jar of one next-auth session (the full-scale part). */
export function fetchSession(baseURL: string, label: string, cookie: string | null, timeoutMs = 60_000): Session {
  return {
    label,
    async get(path, headers) {
      const res = await fetch(new URL(path, baseURL), {
        redirect: 'manual',
        headers: { ...headers, ...(cookie ? { cookie } : {}) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      return { status: res.status, location: res.headers.get('location'), body: await res.text() };
    },
  };
}

function cookiesOf(res: Response): string[] {
  return res.headers.getSetCookie().map((c) => c.split(';')[0]!);
}

/**
 * Signs in through next-auth's credentials flow over HTTP, as the sign-in form does: GET the CSRF
 * token (and its cookie), POST email, password and token to /api/auth/callback/credentials, keep the
 * session cookie it sets. Throws if no session cookie comes back.
 */
export async function signInOverHttp(baseURL: string, email: string, password: string): Promise<Session> {
  const csrfRes = await fetch(new URL('/api/auth/csrf', baseURL));
  const { csrfToken } = (await csrfRes.json()) as { csrfToken: string };
  const jar = cookiesOf(csrfRes);
  const res = await fetch(new URL('/api/auth/callback/credentials', baseURL), {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: jar.join('; '),
      origin: new URL(baseURL).origin,
    },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: '/runs', json: 'true' }).toString(),
  });
  await res.arrayBuffer();
  const session = cookiesOf(res).find(
    (c) => c.startsWith('next-auth.session-token=') || c.startsWith('__Secure-next-auth.session-token='),
  );
  if (!session) throw new Error(`sign-in of ${email} gave no session cookie (status ${res.status})`);
  return fetchSession(baseURL, email, session);
}
