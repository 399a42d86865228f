// Everything the support queue shows: one page of the unknowns in the viewer's scope (Z1), oldest
// first, that match the URL's filters, how many are open in all, and per row whether the viewer may
// resolve it. Each row carries its epoch and when it became unknown: the version a decision on it
// (one row, or the bulk bar) sends back, so a change made meanwhile is refused as stale (Z8).
import { canOn } from '@/lib/auth/grants.ts';
import { supportQueue, type SupportFilter, type UnknownRow } from '@/lib/read-models/support.ts';
import { one, pageSize, type SP } from '@/lib/read-models/views/query.ts';
import type { ConsoleViewer } from '@/lib/read-models/views/viewer.ts';

/** An unknown with whether this person may resolve it: support on its workflow (Z1), as the server checks. */
export type SupportRow = UnknownRow & { canResolve: boolean };

export interface SupportPage {
  /** The filters as applied (trimmed), for the page's form. */
  filter: SupportFilter;
  /** A filter narrows the queue: the empty state and the Clear link say so. */
  filtered: boolean;
  /** Where this page starts (absent: the oldest unknowns). */
  cursor?: string;
  /** Open unknowns matching the filters in the viewer's scope, on every page. */
  total: number;
  rows: SupportRow[];
  /** Rows on this page the viewer may resolve: the bulk bar shows only when there is one. */
  resolvable: number;
  next: string | null;
}

export async function supportPage(v: ConsoleViewer, sp: SP): Promise<SupportPage> {
  const filter: SupportFilter = { runId: one(sp, 'run'), workflow: one(sp, 'workflow'), target: one(sp, 'recipient') };
  const cursor = one(sp, 'cursor');
  const q = await supportQueue(v.db, v.scope, { cursor, limit: pageSize(sp), ...filter });
  // Per row: a person may hold support on some of the workflows they see (Z1), as the server checks.
  const rows = q.rows.map((r) => ({ ...r, canResolve: canOn(v.user.grants, 'effect.resolve', r.workflow) }));
  return {
    filter,
    filtered: Boolean(filter.runId || filter.workflow || filter.target),
    cursor,
    total: q.total,
    rows,
    resolvable: rows.filter((r) => r.canResolve).length,
    next: q.next,
  };
}
