// Everything the run page shows (P3): the run's header, the status shown for it, the plan joined
// with the ledger one page at a time, and what the viewer may do there. null when the run is missing
// or outside the viewer's scope (Z1): the page answers both alike.
import { canOn } from '@/lib/auth/grants.ts';
import type { ConsoleViewer } from './viewer.ts';
import { runHeader, runTable, type RunHeader, type RunTableRow, type RunView } from '../run-detail.ts';
import { runsWithFinishedReplay, shownRunStatus, type ShownRunStatus } from '../run-status.ts';
import { one, pageSize, type SP } from './query.ts';

export interface RunPage {
  header: RunHeader;
  status: ShownRunStatus;
  claimed: number;
  table: { rows: RunTableRow[]; next: string | null; view: RunView };
  canRevoke: boolean;
  canBump: boolean;
  /** The plan is approved: its never-claimed targets may be revoked before a replay (S5). */
  planApproved: boolean;
  /** May request a forced replay (operators); others see the run's replays read-only. */
  canReplay: boolean;
}

export async function runPage(v: ConsoleViewer, runId: string, sp: SP): Promise<RunPage | null> {
  const header = await runHeader(v.db, runId, v.scope);
  if (!header) return null;
  const plan = header.plan;
  const [table, finished] = await Promise.all([
    runTable(v.db, runId, plan?.status === 'approved' || plan?.status === 'submitted' ? plan.id : null, {
      view: one(sp, 'view'),
      state: one(sp, 'state'),
      q: one(sp, 'q'),
      sort: one(sp, 'sort'),
      cursor: one(sp, 'cursor'),
      limit: pageSize(sp),
    }),
    header.status === 'crashed' ? runsWithFinishedReplay(v.db, [runId]) : Promise.resolve(new Set<string>()),
  ]);
  return {
    header,
    status: shownRunStatus(header.status, finished.has(runId), header.exactlyOnce),
    claimed: Object.values(header.counts).reduce((a, b) => a + b, 0),
    table,
    canRevoke: canOn(v.user.grants, 'effect.revoke', header.workflow),
    canBump: canOn(v.user.grants, 'effect.bump.request', header.workflow),
    planApproved: plan?.status === 'approved',
    canReplay: canOn(v.user.grants, 'replay.request', header.workflow),
  };
}
