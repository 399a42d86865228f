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
export { UUID_TEXT } from '../uuid.ts';

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

type Entry = { at: number; computedAt: number; mark: string | null; value: unknown };
const memo = new Map<string, Entry>();
const inFlight = new Map<string, Promise<Entry>>();

/** How long a figure may be carried forward on an unchanged mark before it is computed again anyway:
 *  a transaction that took an older audit id but committed after the mark was read moves no mark. */
const MAX_CARRY_MS = 5 * 60_000;

/** What the caller says has not changed since the figure was computed: a change mark (./change-mark.ts). */
export interface RememberOptions {
  mark?: () => Promise<string>;
  /** How long an unchanged mark carries a figure forward (MAX_CARRY_MS unless shorter). */
  maxCarryMs?: number;
}

function refresh<T>(key: string, compute: () => Promise<T>, options: RememberOptions): Promise<Entry> {
  let running = inFlight.get(key);
  if (!running) {
    running = (async (): Promise<Entry> => {
      const before = memo.get(key);
      const mark = options.mark ? await options.mark() : null;
      const now = Date.now();
      // Nothing changed since the figure was computed: it is current as of now, without the pass.
      if (
        before &&
        mark !== null &&
        before.mark === mark &&
        now - before.computedAt < (options.maxCarryMs ?? MAX_CARRY_MS)
      )
        return { ...before, at: now };
      // The mark is read before the pass, so a change committed during the pass moves it again.
      return { at: now, computedAt: now, mark, value: await compute() };
    })()
      .then((entry) => {
        if (memo.size > 1000) memo.clear();
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
 *  exists, an expired one is served (with its older "as of") while a single refresh runs behind it;
 *  with a change mark, the refresh only reads the mark when nothing has changed. */
export async function remember<T>(
  key: string,
  ttlMs: number,
  compute: () => Promise<T>,
  options: RememberOptions = {},
): Promise<{ value: T; at: Date }> {
  const hit = memo.get(key);
  if (hit && Date.now() - hit.at < ttlMs) return { value: hit.value as T, at: new Date(hit.at) };
  if (hit) {
    refresh(key, compute, options).catch(() => {}); // a failed refresh leaves the older figure; the next view retries
    return { value: hit.value as T, at: new Date(hit.at) };
  }
  const entry = await refresh(key, compute, options);
  return { value: entry.value as T, at: new Date(entry.at) };
}

/**
 * Gives remember() its first figure for `key`, computed elsewhere: a run found large only once its
 * exact figure was computed (the headline, the counts) is then read through remember() under another
 * key, which would otherwise start empty and make every view wait for a second pass over the run.
 * The figure carries no mark, so its first refresh, after ttlMs and behind the views, computes it again.
 */
export function seedRemembered<T>(key: string, value: T): void {
  if (memo.has(key)) return;
  const now = Date.now();
  memo.set(key, { at: now, computedAt: now, mark: null, value });
}

/** How long a small run's figure may be carried forward on an unchanged mark: the bound on how late a
 *  change that committed out of audit-id order can show (see MAX_CARRY_MS). */
export const EXACT_CARRY_MS = 2_000;

type ExactRun = { mark: string; value: Promise<unknown> };
const exactInFlight = new Map<string, ExactRun>();

/**
 * A figure that is exact on every view, shared while nothing changes: each call reads the change mark
 * (one indexed statement) and recomputes only when it moved or the figure is EXACT_CARRY_MS old.
 * Concurrent calls share a computation only when it started on the mark they read themselves: one
 * that started before a change must not answer a view that came after it. For figures small enough
 * to compute per view but viewed by many people at once (a run of a few thousand targets during an
 * incident).
 */
export async function rememberWhileUnchanged<T>(
  key: string,
  compute: () => Promise<T>,
  mark: () => Promise<string>,
): Promise<T> {
  const current = await mark();
  const startedAt = Date.now();
  const hit = memo.get(key);
  if (hit && hit.mark === current && startedAt - hit.computedAt < EXACT_CARRY_MS) return hit.value as T;
  const running = exactInFlight.get(key);
  if (running && running.mark === current) return (await running.value) as T;
  const value = compute().then((v) => {
    const newer = memo.get(key);
    if (!newer || newer.computedAt <= startedAt) {
      if (memo.size > 1000) memo.clear();
      memo.set(key, { at: startedAt, computedAt: startedAt, mark: current, value: v });
    }
    return v;
  });
  const run = { mark: current, value };
  exactInFlight.set(key, run);
  try {
    return await value;
  } finally {
    if (exactInFlight.get(key) === run) exactInFlight.delete(key);
  }
}

/**
 * A run id as people type it: the whole UUID or the short id the console shows (its first 8 hex
 * digits, or any leading part of 4 or more). Returned as the lowest and highest UUID with that
 * prefix, so a filter is a range on the id's index instead of a scan over the text of every id;
 * null for text that is not the start of a UUID.
 */
export function runIdRange(text: string): { lo: string; hi: string } | null {
  const hex = text.trim().toLowerCase();
  if (!/^[0-9a-f-]+$/.test(hex)) return null;
  // Dashes only where a UUID has them.
  const layout = '00000000-0000-0000-0000-000000000000';
  for (let i = 0; i < hex.length; i++) if ((hex[i] === '-') !== (layout[i] === '-')) return null;
  const digits = hex.replace(/-/g, '');
  if (digits.length < 4 || digits.length > 32) return null;
  const shape = (d: string) =>
    `${d.slice(0, 8)}-${d.slice(8, 12)}-${d.slice(12, 16)}-${d.slice(16, 20)}-${d.slice(20)}`;
  return { lo: shape(digits.padEnd(32, '0')), hi: shape(digits.padEnd(32, 'f')) };
}

/** LIKE's wildcards in typed text, taken literally. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** An inverted date range, named on its "to" field: nothing can match it, and the page says why. */
export function dateRangeProblem(
  from: string | undefined,
  to: string | undefined,
): { field: 'to'; message: string } | null {
  const f = from ? new Date(from) : null;
  const t = to ? new Date(to) : null;
  if (f && t && !Number.isNaN(f.getTime()) && !Number.isNaN(t.getTime()) && f >= t)
    return { field: 'to', message: `"To" (${to}) must be later than "From" (${from}): nothing can match this range` };
  return null;
}
