// A one-second memory of resolved sessions per process (Z4). Every console page used to decrypt the
// session token and read the user row (twice: the layout and the page), which under many sessions was
// a large share of a page's time. A session's answer is now shared by the requests carrying the same
// token for SESSION_CACHE_MS, concurrent ones included. Revocation stays prompt: a sign-out, a role
// change, a disable or a password change made through this process forgets every cached session at
// once, and another instance's change reaches this one within SESSION_CACHE_MS.
import type { DbOrTx } from '../db/client.ts';
import { readCookie, sessionFromCookie, SESSION_COOKIES } from './session.ts';

export const SESSION_CACHE_MS = 1_000;
const MAX_ENTRIES = 10_000;

type Resolved = Awaited<ReturnType<typeof sessionFromCookie>>;
interface Cache {
  entries: Map<string, { at: number; value: Promise<Resolved> }>;
}

// On globalThis: Next may load this module once per route bundle, and a sign-out handled by one bundle
// must clear what the pages' bundles remember.
const holder = globalThis as unknown as { __ledgerSessionCache?: Cache };
const cache = (): Cache => (holder.__ledgerSessionCache ??= { entries: new Map() });

/** sessionFromCookie, remembered for SESSION_CACHE_MS per session token. */
export function cachedSessionFromCookie(header: string | null, database: DbOrTx): Promise<Resolved> {
  const token = SESSION_COOKIES.map((name) => readCookie(header, name)).find(Boolean);
  if (!token) return sessionFromCookie(header, database);
  const { entries } = cache();
  const now = Date.now();
  const hit = entries.get(token);
  if (hit && now - hit.at < SESSION_CACHE_MS) return hit.value;
  if (entries.size >= MAX_ENTRIES) entries.clear();
  const value = sessionFromCookie(header, database);
  entries.set(token, { at: now, value });
  value.catch(() => entries.delete(token)); // a failed read (database down) is not remembered
  return value;
}

/** Forgets every remembered session: called after any change that ends sessions in this process. */
export function forgetCachedSessions(): void {
  cache().entries.clear();
}
