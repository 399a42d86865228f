// Shared pieces of the page read models: keyset cursors and a short memo for figures that are
// expensive on very large runs.
import type { EffectState } from '@/lib/ledger/transitions.ts';

export type StateCounts = Record<EffectState, number>;

export function emptyCounts(): StateCounts {
  return { pending: 0, done: 0, failed: 0, unknown: 0, revoked: 0, stuck: 0 };
}

/** PostgreSQL's own text of a timestamptz (`created_at::text`). Keyset cursors on a time column carry
 *  it rather than a JavaScript Date, which drops the microseconds the column keeps: two rows a
 *  microsecond apart would then be skipped or shown twice across a page boundary. */
export const TIMESTAMP_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d){0,2}$/;
export const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Opaque keyset cursor: base64url of a JSON tuple. */
export function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor<T extends unknown[]>(
  cursor: string | null | undefined,
  check: (v: unknown[]) => v is T,
): T | null {
  if (!cursor) return null;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(value) && check(value) ? value : null;
  } catch {
    return null;
  }
}

const memo = new Map<string, { at: number; value: unknown }>();
const inFlight = new Map<string, Promise<{ at: number; value: unknown }>>();

function refresh<T>(key: string, compute: () => Promise<T>): Promise<{ at: number; value: unknown }> {
  let running = inFlight.get(key);
  if (!running) {
    running = compute()
      .then((value) => {
        if (memo.size > 1000) memo.clear();
        const entry = { at: Date.now(), value };
        memo.set(key, entry);
        return entry;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, running);
  }
  return running;
}

/** Memoizes a figure for ttlMs (only used where the page says "as of"). One computation per key at a
 *  time: concurrent requests share it instead of each scanning a million-item run. Once a figure
 *  exists, an expired one is served (with its older "as of") while a single refresh runs behind it. */
export async function remember<T>(
  key: string,
  ttlMs: number,
  compute: () => Promise<T>,
): Promise<{ value: T; at: Date }> {
  const hit = memo.get(key);
  if (hit && Date.now() - hit.at < ttlMs) return { value: hit.value as T, at: new Date(hit.at) };
  if (hit) {
    refresh(key, compute).catch(() => {}); // a failed refresh leaves the older figure; the next view retries
    return { value: hit.value as T, at: new Date(hit.at) };
  }
  const entry = await refresh(key, compute);
  return { value: entry.value as T, at: new Date(entry.at) };
}
