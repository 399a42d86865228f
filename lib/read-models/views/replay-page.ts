// Everything the forced replay page shows (F1-F5, Z3): the preview of the run's replay set one page at
// a time, the run's replays with their progress and, for the latest finished ones, their report, and
// what the viewer may do there. Permissions are settled here with the viewer's session; the page draws
// the outcome. null when the run id is malformed, the run is missing or outside the viewer's scope
// (Z1): the page answers all alike.
import { assertVisible } from '@/lib/auth/guard.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { LedgerError } from '@/lib/core/errors.ts';
import { userLabels } from '@/lib/read-models/admin.ts';
import {
  getReplayReport,
  listReplays,
  previewReplay,
  VIEW_STATES,
  type PreviewItem,
  type ReplayPreview,
  type ReplayProgress,
  type ReplayReport,
  type ViewState,
} from '@/lib/replay/index.ts';
import { isUuid } from '@/lib/uuid.ts';
import { one, type SP } from '@/lib/read-models/views/query.ts';
import type { ConsoleViewer } from '@/lib/read-models/views/viewer.ts';

const ACTIVE = ['awaiting_approval', 'approved', 'running', 'paused'];
// Rows per view: the preview pages through the rest, a report's downloads hold every target. A page
// costs the server about in proportion to its rows (docs/BENCHMARKS.md, operator pages).
const PREVIEW_ROWS = 50;
const REPORT_ROWS = 50;
/** Finished replays shown with their report (newest first). */
const REPORTS_SHOWN = 3;

/** A preview row as the page receives it: what the table shows, nothing more (the tool and action of
 *  each target stay on the server: the preview is the heaviest operator page). */
export type PreviewRow = Pick<
  PreviewItem,
  'itemId' | 'key' | 'target' | 'recordId' | 'state' | 'epoch' | 'changedBy' | 'changedAt' | 'willSend' | 'skipReason'
>;

export function previewRow(i: PreviewItem): PreviewRow {
  return {
    itemId: i.itemId,
    key: i.key,
    target: i.target,
    recordId: i.recordId,
    state: i.state,
    epoch: i.epoch,
    changedBy: i.changedBy,
    changedAt: i.changedAt,
    willSend: i.willSend,
    skipReason: i.skipReason,
  };
}

export interface ReplayPage {
  /** The preview's filter as applied: an unknown one reads as 'all'. */
  filter: string;
  preview: Pick<ReplayPreview, 'total' | 'willSend' | 'setHash' | 'fourEyes' | 'exactlyOnce' | 'nextCursor'> & {
    /** Targets per state, in the order the page lists them (VIEW_STATES stays on the server). */
    counts: { state: ViewState; count: number }[];
    rows: PreviewRow[];
  };
  /** Newest first; the latest finished or cancelled ones carry their report's first rows. */
  replays: { progress: ReplayProgress; report: ReplayReport | null }[];
  /** Rows a report shows before its downloads. */
  reportRows: number;
  /** Emails of the people the replays name (requested, approved, decided by). */
  users: Record<string, string>;
  /** A replay's requester may not approve it (Z3); the panel tells them. */
  viewerId: string;
  canRequest: boolean;
  canControl: boolean;
  /** The status of the replay still open (awaiting approval, approved, running or paused), if any:
   *  another cannot be requested meanwhile. */
  activeStatus: string | null;
}

export async function replayPage(v: ConsoleViewer, runId: string, sp: SP): Promise<ReplayPage | null> {
  if (!isUuid(runId)) return null;
  const filterRaw = one(sp, 'filter') ?? 'all';
  const filter = (['all', 'will_send', 'skipped', ...VIEW_STATES] as string[]).includes(filterRaw) ? filterRaw : 'all';
  const after = one(sp, 'after');
  let workflow: string | null;
  let preview: ReplayPreview;
  try {
    // Z1: a run of a workflow the viewer holds no role in answers like a missing one.
    workflow = (await assertVisible(v, 'run', runId))[0] ?? null;
    preview = await previewReplay(
      { db: v.db },
      { runId, filter, after: after && /^\d+$/.test(after) ? after : undefined, limit: PREVIEW_ROWS },
    );
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'not_found') return null;
    throw error;
  }
  const replays = await listReplays({ db: v.db }, { runId });
  const finished = replays.filter((r) => r.status === 'completed' || r.status === 'cancelled').slice(0, REPORTS_SHOWN);
  const ids = [
    ...new Set(
      replays.flatMap((r) =>
        [r.requestedById, r.approvedById, r.approval?.decidedById].filter((x): x is string => Boolean(x)),
      ),
    ),
  ];
  const [reports, users] = await Promise.all([
    Promise.all(finished.map((r) => getReplayReport({ db: v.db }, { replayId: r.replayId, limit: REPORT_ROWS }))),
    userLabels(v.db, ids),
  ]);
  const reportOf = new Map(reports.map((r) => [r.replayId, r]));
  return {
    filter,
    preview: {
      total: preview.total,
      willSend: preview.willSend,
      setHash: preview.setHash,
      fourEyes: preview.fourEyes,
      exactlyOnce: preview.exactlyOnce,
      nextCursor: preview.nextCursor,
      counts: VIEW_STATES.map((state) => ({ state, count: preview.counts[state] })),
      rows: preview.items.map(previewRow),
    },
    replays: replays.map((progress) => ({ progress, report: reportOf.get(progress.replayId) ?? null })),
    reportRows: REPORT_ROWS,
    users,
    viewerId: v.user.id,
    canRequest: canOn(v.user.grants, 'replay.request', workflow),
    canControl: canOn(v.user.grants, 'replay.control', workflow) || canOn(v.user.grants, 'replay.approve', workflow),
    activeStatus: replays.find((r) => ACTIVE.includes(r.status))?.status ?? null,
  };
}
