// What a run's timeline is asked for, read off its address: the kinds shown, a target, the order and
// the keyset cursor. A malformed kind, order or cursor is refused naming the parameter (422), never
// read as "everything": a shared link that silently lost its filter would show a different timeline.
import { invalid } from '@/lib/ledger/errors.ts';
import { decodeCursor, encodeCursor, TIMESTAMP_TEXT } from './common.ts';
import { one, pageSize, type SP } from './views/query.ts';

/** Every kind of event a run's timeline holds, in the order the filter offers them. */
export const TIMELINE_KINDS = ['claim', 'attempt', 'answer', 'transition', 'decision', 'replay'] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export const TIMELINE_ORDERS = ['newest', 'oldest'] as const;
export type TimelineOrder = (typeof TIMELINE_ORDERS)[number];

export interface TimelineQuery {
  kinds: TimelineKind[];
  /** The target as typed (trimmed); matched as stored or lower-cased, as the audit filter does. */
  target: string | null;
  order: TimelineOrder;
  /** The last row of the previous page: its time as PostgreSQL wrote it (microseconds) and its tie. */
  after: { at: string; tie: string } | null;
  limit: number;
}

/** An event's tiebreaker: a letter naming its table, then its id (audit ids zero-padded so that the
 *  text sorts as the number does). Compared with the "C" collation, byte by byte. */
export const TIE_TEXT = /^[atpr][0-9a-f-]{1,40}$/;

/** The kinds asked for: `kind=claim,attempt` or `kind=claim&kind=attempt`; none means all. */
export function timelineKinds(raw: string | string[] | undefined): TimelineKind[] {
  const words = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw])
    .flatMap((v) => v.split(','))
    .map((w) => w.trim())
    .filter(Boolean);
  if (words.length === 0) return [...TIMELINE_KINDS];
  const unknown = words.filter((w) => !(TIMELINE_KINDS as readonly string[]).includes(w));
  if (unknown.length > 0)
    throw invalid('kind', `kind: ${JSON.stringify(unknown[0])} is not one of ${TIMELINE_KINDS.join(', ')}`);
  return TIMELINE_KINDS.filter((k) => words.includes(k));
}

export function timelineQuery(sp: SP): TimelineQuery {
  const order = one(sp, 'order') ?? 'newest';
  if (!(TIMELINE_ORDERS as readonly string[]).includes(order))
    throw invalid('order', `order: ${JSON.stringify(order)} is not one of ${TIMELINE_ORDERS.join(', ')}`);
  const target = one(sp, 'target') ?? null;
  if (target !== null && target.length > 1000) throw invalid('target', 'target: at most 1,000 characters');
  const cursor = one(sp, 'cursor');
  let after: TimelineQuery['after'] = null;
  if (cursor) {
    const value = decodeCursor(
      cursor,
      (v): v is [string, string] =>
        v.length === 2 &&
        typeof v[0] === 'string' &&
        TIMESTAMP_TEXT.test(v[0]) &&
        typeof v[1] === 'string' &&
        TIE_TEXT.test(v[1]),
    );
    if (!value) throw invalid('cursor', 'cursor: not a cursor this timeline gave; start again from the first page');
    after = { at: value[0], tie: value[1] };
  }
  return { kinds: timelineKinds(sp.kind), target, order: order as TimelineOrder, after, limit: pageSize(sp) };
}

export const timelineCursor = (at: string, tie: string): string => encodeCursor([at, tie]);
