// What the guard needs to know about the request being served: the session cookie, where it came
// from (A1: where) and whether it is cross-site. Read from next/headers in server actions and from
// the Request in route handlers. Tests that call server actions directly (the authorization
// matrix) supply it through runWithRequest, and then go through the very same guard.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { SessionUser } from './session.ts';

export interface RequestInfo {
  cookie: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string;
  origin: string | null;
  host: string | null;
  secFetchSite: string | null;
  /** The person followed a link or typed the address: a top-level document navigation the browser
   *  says they started (Sec-Fetch-Mode, -Dest, -User; no page's script can set these). */
  userNavigation?: boolean;
  /** A management API call with a personal access token (lib/auth/access-tokens.ts) instead of a
   *  session cookie. The guard notes which token and person it resolved to, for the use's audit. */
  accessToken?: { bearer: string; tokenId?: string | null; user?: SessionUser | null };
}

const override = new AsyncLocalStorage<RequestInfo>();

export function runWithRequest<T>(info: RequestInfo, fn: () => Promise<T>): Promise<T> {
  return override.run(info, fn);
}

// The address is the first X-Forwarded-For entry: right behind a reverse proxy that sets it. Next
// only fills the header when it is absent, so without a proxy a client can choose its own address;
// the per-account sign-in limit does not depend on it.
export function requestInfoFromHeaders(h: Headers): RequestInfo {
  const forwarded = h.get('x-forwarded-for')?.split(',')[0]?.trim();
  return {
    cookie: h.get('cookie'),
    ip: forwarded || h.get('x-real-ip') || null,
    userAgent: h.get('user-agent'),
    requestId: h.get('x-request-id') || randomUUID(),
    origin: h.get('origin'),
    host: h.get('x-forwarded-host') || h.get('host'),
    secFetchSite: h.get('sec-fetch-site'),
    userNavigation:
      h.get('sec-fetch-mode') === 'navigate' &&
      h.get('sec-fetch-dest') === 'document' &&
      h.get('sec-fetch-user') === '?1',
  };
}

/** The current server action's request. */
export async function currentRequest(): Promise<RequestInfo> {
  const store = override.getStore();
  if (store) return store;
  const { headers } = await import('next/headers');
  return requestInfoFromHeaders(await headers());
}

/**
 * Cross-site requests are refused for every mutating action: the browser's Sec-Fetch-Site says so
 * directly; otherwise an Origin whose host differs from the Host header gives it away. (Next also
 * checks Origin for server actions; route handlers get nothing for free.) A route whose only change
 * is the caller's own bookkeeping may accept a cross-site link the person clicked themselves
 * (`allowUserNavigation`: opening a notification from an email read in webmail).
 */
export function crossSiteProblem(info: RequestInfo, allowUserNavigation = false): string | null {
  if (info.secFetchSite === 'cross-site') {
    return allowUserNavigation && info.userNavigation ? null : 'cross-site request refused';
  }
  if (info.origin && info.origin !== 'null' && info.host) {
    try {
      if (new URL(info.origin).host !== info.host) return `cross-site request refused (origin ${info.origin})`;
    } catch {
      return 'cross-site request refused (malformed Origin)';
    }
  } else if (info.origin === 'null') {
    return 'cross-site request refused (opaque origin)';
  }
  return null;
}
