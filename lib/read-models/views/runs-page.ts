// Everything the runs list shows: one page of the runs in the viewer's scope (Z1) that match the
// URL's filters, each with the status the console shows for it, and the workflows the filter offers.
// The filters come back as the read model understood them (trimmed), so the page's form shows what
// was applied, and the page knows whether any filter narrowed the list.
import { listRuns, type RunRow, type RunsFilter } from '@/lib/read-models/runs.ts';
import { runsWithFinishedReplay, shownRunStatus, type ShownRunStatus } from '@/lib/read-models/run-status.ts';
import { one, type SP } from '@/lib/read-models/views/query.ts';
import { dateRangeProblem } from '@/lib/read-models/common.ts';
import type { ConsoleViewer } from '@/lib/read-models/views/viewer.ts';

/** The runs list's filters as applied (the page size is the read model's own). */
export type RunsPageFilter = Omit<RunsFilter, 'limit'>;

export interface RunsPage {
  filter: RunsPageFilter;
  /** An inverted date range, named on its field (nothing can match it). */
  problem: { field: 'to'; message: string } | null;
  /** A filter other than the cursor narrows the list: the empty state and the Clear link say so. */
  filtered: boolean;
  rows: (RunRow & { shownStatus: ShownRunStatus })[];
  next: string | null;
  /** The workflows in the viewer's scope that have runs, for the filter's select. */
  workflows: string[];
}

export async function runsPage(v: ConsoleViewer, sp: SP): Promise<RunsPage> {
  const filter: RunsPageFilter = {
    workflow: one(sp, 'workflow'),
    status: one(sp, 'status'),
    from: one(sp, 'from'),
    to: one(sp, 'to'),
    q: one(sp, 'q'),
    cursor: one(sp, 'cursor'),
  };
  // The page size stays listRuns' default (25): the runs list never offered "rows per page".
  const { rows, next, workflows } = await listRuns(v.db, filter, v.scope);
  // A crashed run whose forced replay finished reads as replayed or recovered (run-status.ts).
  const replayed = await runsWithFinishedReplay(
    v.db,
    rows.filter((r) => r.status === 'crashed').map((r) => r.id),
  );
  return {
    filter,
    problem: dateRangeProblem(filter.from, filter.to),
    filtered: Boolean(filter.workflow || filter.status || filter.from || filter.to || filter.q),
    rows: rows.map((r) => ({ ...r, shownStatus: shownRunStatus(r.status, replayed.has(r.id), r.exactlyOnce) })),
    next,
    workflows,
  };
}
