import type { Metadata } from 'next';
import Link from 'next/link';
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
import { ReplayPanel, type ProgressView } from '@/app/(console)/_components/replay/replay-panel.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, Stat } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { one, type SP } from '@/components/search-params.ts';

export const metadata: Metadata = { title: 'Force replay' };
export const dynamic = 'force-dynamic';

const STATE_LABEL: Record<string, string> = {
  not_sent: 'never sent',
  awaiting_claim: 'awaiting claim',
  failed: 'failed',
  in_flight: 'in flight',
  done: 'done',
  unknown: 'unknown',
  revoked: 'revoked',
  stuck: 'stuck',
};
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

const pct = (e: { exactlyOnce: number; approved: number; ratio: number } | null) =>
  e
    ? `${(e.ratio * 100).toFixed(1)}% (${e.exactlyOnce.toLocaleString('en-US')}/${e.approved.toLocaleString('en-US')})`
    : '—';

export default async function ReplayPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>;
  searchParams: Promise<SP>;
}) {
  const [{ runId }, sp, { user, db, scope }] = await Promise.all([params, searchParams, requireViewer()]);
  if (!/^[0-9a-f-]{36}$/i.test(runId)) notFound();
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
          value={pct(preview.exactlyOnce)}
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
                  {report && <Report report={report} />}
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
          <div className="relative overflow-x-auto">
            {/* Cell spacing is set once on the table rather than on each cell (a smaller page). */}
            <table
              className="w-full text-left text-xs [&_td]:py-1 [&_td]:pr-3 [&_th]:pr-3"
              data-testid="replay-preview"
            >
              <thead className="text-zinc-500">
                <tr>
                  <th className="py-1">Target</th>
                  <th>Record</th>
                  <th>State</th>
                  <th>Epoch</th>
                  <th>Last changed by</th>
                  <th>When</th>
                  <th>Replay</th>
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100">
                {preview.items.map((i) => (
                  <tr key={i.itemId} data-will-send={i.willSend ? 'yes' : 'no'} data-state={i.state}>
                    <td>
                      <Link className="mono underline" href={`/target?key=${encodeURIComponent(i.key)}`}>
                        {i.target}
                      </Link>
                    </td>
                    <td className="mono whitespace-nowrap">{i.recordId}</td>
                    <td>
                      <Badge tone={i.willSend ? 'blue' : 'zinc'}>{STATE_LABEL[i.state] ?? i.state}</Badge>
                    </td>
                    <td className="text-sm tabular-nums">{i.epoch}</td>
                    <td>{i.changedBy ?? '—'}</td>
                    <td className="whitespace-nowrap">{i.changedAt ? <Time value={i.changedAt} /> : '—'}</td>
                    <td>
                      {i.willSend ? (
                        <b>will be sent</b>
                      ) : (
                        <span className="text-zinc-600">skipped: {i.skipReason}</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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

function Report({ report }: { report: ReplayReport }) {
  return (
    <div className="mt-3 rounded-md border border-zinc-200 p-3" data-testid="replay-report">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">Report</h3>
        <div className="flex gap-2">
          <a
            href={`/api/console/replays/${report.replayId}/report?format=csv`}
            className={linkButton('secondary', 'sm')}
            data-testid="report-csv"
            download
          >
            Download CSV
          </a>
          <a
            href={`/api/console/replays/${report.replayId}/report?format=json`}
            className={linkButton('secondary', 'sm')}
            data-testid="report-json"
            download
          >
            Download JSON
          </a>
        </div>
      </div>
      <dl className="mt-2 grid grid-cols-2 gap-2 text-sm lg:grid-cols-4">
        <div>
          <dt className="text-xs text-zinc-500">Went out</dt>
          <dd data-testid="report-sent" className="tabular-nums font-semibold">
            {report.sent}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Skipped</dt>
          <dd data-testid="report-skipped" className="tabular-nums">
            {report.skipped}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Exactly once before</dt>
          <dd data-testid="report-eo-before">{pct(report.exactlyOnceBefore)}</dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Exactly once after</dt>
          <dd data-testid="report-eo-after">{pct(report.exactlyOnceAfter)}</dd>
        </div>
      </dl>
      <div className="mt-1 text-xs text-zinc-600">
        Failed {report.failed} · unknown {report.unknown} ·{' '}
        {report.finishedAt ? (
          <>
            finished <Time value={report.finishedAt} />
          </>
        ) : (
          'not finished'
        )}
      </div>
      {report.skippedBecause.length > 0 && (
        <div className="mt-2 text-sm">
          Skipped because:
          <ul className="ml-4 list-disc text-xs">
            {report.skippedBecause.map((s) => (
              <li key={s.reason}>
                {s.reason}: <b>{s.count}</b>
              </li>
            ))}
          </ul>
        </div>
      )}
      <details className="mt-2 text-xs">
        <summary className="cursor-pointer text-zinc-600">
          Every target of this replay ({report.total}
          {report.nextCursor ? `, first ${REPORT_ROWS} shown; the downloads hold every target` : ''})
        </summary>
        <div className="relative overflow-x-auto">
          <table className="mt-1 w-full text-left" data-testid="report-items">
            <thead className="text-zinc-500">
              <tr>
                <th className="pr-3">Target</th>
                <th className="pr-3">Outcome</th>
                <th className="pr-3">State now</th>
                <th>Note</th>
              </tr>
            </thead>
            <tbody>
              {report.items.map((i) => (
                <tr key={i.itemId} data-outcome={i.outcome}>
                  <td className="mono pr-3">{i.target}</td>
                  <td className="pr-3">{i.outcome}</td>
                  <td className="pr-3">{i.stateNow ?? '—'}</td>
                  <td className="break-all">{i.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
