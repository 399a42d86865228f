import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { notFound } from 'next/navigation';
import { requireViewer } from '@/lib/auth/page.ts';
import { userLabels } from '@/lib/read-models/admin.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { assertVisible } from '@/lib/auth/guard.ts';
import { LedgerError } from '@/lib/ledger/index.ts';
import {
  getReplayReport,
  listReplays,
  previewReplay,
  VIEW_STATES,
  type ReplayProgress,
  type ReplayReport,
} from '@/lib/replay/index.ts';
import { RequestReplayForm } from '@/app/(console)/_components/replay/request-form.tsx';
import { exactlyOncePercent, Report } from '@/app/(console)/_components/replay/report.tsx';
import { previewRow, STATE_LABEL } from '@/app/(console)/_components/replay/preview-data.ts';
import { PreviewTable } from '@/app/(console)/_components/replay/preview-table.tsx';
import { ReplayPanel, type ProgressView } from '@/app/(console)/_components/replay/replay-panel.tsx';
import { Card, EmptyState, PageHeader, Stat } from '@/components/ui/card.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { one, type SP } from '@/components/search-params.ts';
import { isUuid } from '@/lib/uuid.ts';

export const metadata: Metadata = { title: 'Force replay' };
export const dynamic = 'force-dynamic';

const FILTERS = [
  ['all', 'All'],
  ['will_send', 'Will be sent'],
  ['skipped', 'Skipped'],
] as const;
const ACTIVE = ['awaiting_approval', 'approved', 'running', 'paused'];
// Rows per view: the preview pages through the rest, a report's downloads hold every target. A page
// costs the server about in proportion to its rows (docs/BENCHMARKS.md, operator pages).
const PREVIEW_ROWS = 50;
const REPORT_ROWS = 50;

function view(p: ReplayProgress): ProgressView {
  return JSON.parse(
    JSON.stringify({
      replayId: p.replayId,
      status: p.status,
      reason: p.reason,
      setHash: p.setHash,
      requestedById: p.requestedById,
      approvedById: p.approvedById,
      total: p.total,
      sent: p.sent,
      skipped: p.skipped,
      failed: p.failed,
      unknown: p.unknown,
      remaining: p.remaining,
      fraction: p.fraction,
      createdAt: p.createdAt,
      startedAt: p.startedAt,
      finishedAt: p.finishedAt,
      approval: p.approval,
    }),
  ) as ProgressView;
}

export default async function ReplayPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>;
  searchParams: Promise<SP>;
}) {
  const [{ runId }, sp, { user, db, scope }] = await Promise.all([params, searchParams, requireViewer()]);
  if (!isUuid(runId)) notFound();
  const filterRaw = one(sp, 'filter') ?? 'all';
  const filter = (['all', 'will_send', 'skipped', ...VIEW_STATES] as string[]).includes(filterRaw) ? filterRaw : 'all';
  const after = one(sp, 'after');
  let preview;
  let workflow: string | null;
  try {
    // Z1: a run of a workflow the viewer holds no role in answers like a missing one.
    workflow = (await assertVisible({ db, scope }, 'run', runId))[0] ?? null;
    preview = await previewReplay(
      { db },
      { runId, filter, after: after && /^\d+$/.test(after) ? after : undefined, limit: PREVIEW_ROWS },
    );
  } catch (error) {
    if (error instanceof LedgerError && error.code === 'not_found') notFound();
    throw error;
  }
  const replays = await listReplays({ db }, { runId });
  const reports = new Map<string, ReplayReport>();
  for (const r of replays.filter((x) => x.status === 'completed' || x.status === 'cancelled').slice(0, 3)) {
    reports.set(r.replayId, await getReplayReport({ db }, { replayId: r.replayId, limit: REPORT_ROWS }));
  }
  const ids = [
    ...new Set(
      replays.flatMap((r) =>
        [r.requestedById, r.approvedById, r.approval?.decidedById].filter((x): x is string => Boolean(x)),
      ),
    ),
  ];
  const users = await userLabels(db, ids);
  const canRequest = canOn(user.grants, 'replay.request', workflow);
  const canControl = canOn(user.grants, 'replay.control', workflow) || canOn(user.grants, 'replay.approve', workflow);
  const active = replays.find((r) => ACTIVE.includes(r.status));
  const href = (f: string) => `/runs/${runId}/replay${f === 'all' ? '' : `?filter=${f}`}`;

  return (
    <>
      <PageHeader
        title={
          <span>
            Force replay of run <span className="mono">{runId.slice(0, 8)}</span>
          </span>
        }
        description={
          <span>
            Sends only the approved targets that have no effect yet, or whose last one failed (F1, F2); each send claims
            through the ledger (F3).{' '}
            <Link className="underline" href={`/runs/${runId}`}>
              Back to the run
            </Link>
          </span>
        }
      />
      <LiveRefresh runId={runId} topics={['effect', 'plan', 'replay', 'approval']} />
      <div className="mb-4 grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Stat label="Approved targets" value={preview.total.toLocaleString('en-US')} />
        <Stat
          label="Will be sent"
          value={<span data-testid="replay-will-send">{preview.willSend.toLocaleString('en-US')}</span>}
          hint="never sent, awaiting a claim, or failed"
        />
        <Stat
          label="Skipped"
          value={(preview.total - preview.willSend).toLocaleString('en-US')}
          hint="in flight, done, unknown, revoked or stuck (F2)"
        />
        <Stat
          label="Exactly once now (P4)"
          value={exactlyOncePercent(preview.exactlyOnce)}
          hint={preview.fourEyes ? 'four-eyes on: a second operator approves (Z3)' : 'four-eyes off for these tools'}
        />
      </div>

      {replays.length > 0 && (
        <Card
          title="Replays of this run"
          className="mb-4"
          description="Newest first. The progress updates every second while a replay runs."
        >
          <ul className="divide-y divide-zinc-100">
            {replays.map((r) => {
              const report = reports.get(r.replayId);
              return (
                <li key={r.replayId} className="py-3">
                  <ReplayPanel
                    key={`${r.replayId}:${r.status}`}
                    initial={view(r)}
                    viewerId={user.id}
                    canControl={canControl}
                    users={users}
                  />
                  {report && <Report report={report} shown={REPORT_ROWS} />}
                </li>
              );
            })}
          </ul>
        </Card>
      )}

      <Card title="Confirm" className="mb-4">
        {!canRequest ? (
          <p className="text-sm text-zinc-600">Only operators force replays.</p>
        ) : active ? (
          <p className="text-sm text-zinc-600">
            A replay of this run is {active.status.replace('_', ' ')}; finish or cancel it before requesting another.
          </p>
        ) : preview.willSend === 0 ? (
          <EmptyState title="Nothing to send">
            Every approved target is done or needs its own action first (resolve an unknown, bump an epoch).
          </EmptyState>
        ) : (
          <RequestReplayForm
            runId={runId}
            willSend={preview.willSend}
            setHash={preview.setHash}
            fourEyes={preview.fourEyes}
          />
        )}
      </Card>

      <Card
        title="Preview (F1)"
        description={
          <span>
            Every approved target with its state and who changed it last. Set hash{' '}
            <span className="mono break-all">{preview.setHash}</span>
          </span>
        }
      >
        <ul className="mb-3 flex flex-wrap gap-x-4 gap-y-1 text-sm" data-testid="replay-counts">
          {VIEW_STATES.map((s) => (
            <li key={s} data-state={s}>
              <Link className="underline decoration-dotted" href={href(s)}>
                {STATE_LABEL[s]}
              </Link>{' '}
              <b className="tabular-nums">{preview.counts[s].toLocaleString('en-US')}</b>
            </li>
          ))}
        </ul>
        <nav className="mb-3 flex gap-2 text-sm" aria-label="Filter">
          {FILTERS.map(([f, label]) => (
            <Link
              key={f}
              href={href(f)}
              aria-current={filter === f ? 'page' : undefined}
              className={filter === f ? 'font-semibold underline' : 'text-blue-700 underline'}
            >
              {label}
            </Link>
          ))}
        </nav>
        {preview.items.length === 0 ? (
          <EmptyState title="No targets in this view" />
        ) : (
          <PreviewTable rows={preview.items.map(previewRow)} />
        )}
        {preview.nextCursor && (
          <div className="mt-3 text-sm">
            <Link
              className="text-blue-700 underline"
              href={`/runs/${runId}/replay?filter=${filter}&after=${preview.nextCursor}`}
            >
              Next page
            </Link>
          </div>
        )}
      </Card>
    </>
  );
}
