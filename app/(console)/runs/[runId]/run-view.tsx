'use client';
// The run page (P3): the run's header and status, its targets by state, and the plan joined with the
// ledger, read from the run's view and kept live.
import { Link } from '@/components/ui/link.tsx';
import { RunTable } from '@/app/(console)/_components/run-table.tsx';
import { ExactlyOnce, StateBar } from '@/components/state-bar.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, Stat } from '@/components/ui/card.tsx';
import { formatTime, Time } from '@/components/time.tsx';
import type { SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';
import { PageView } from '@/components/views/page-view.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { SHOWN_RUN_STATUS_TONE } from '@/lib/read-models/run-status.ts';
import type { RunPage } from '@/lib/read-models/views/run-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';

export function RunView({ runId }: { runId: string }) {
  return <PageView<RunPage> view="run" runId={runId} title="Run" Body={RunBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). */
export function RunBody({ view, runId, sp }: { view: Wire<RunPage>; runId: string; sp: SP }) {
  const { header, status, claimed, table, canRevoke, canBump, planApproved, canReplay } = view;
  const plan = header.plan;
  return (
    <>
      <PageHeader
        title={
          <span>
            Run <span className="mono">{header.id.slice(0, 8)}</span>
          </span>
        }
        description={
          <span>
            Workflow <b>{header.workflow}</b> · event <span className="mono">{header.triggerId}</span> · created{' '}
            <Time value={header.createdAt} />
          </span>
        }
        actions={
          <div className="flex flex-wrap gap-2">
            <Link href={`/runs/${runId}/timeline`} className={linkButton('ghost')} data-testid="run-timeline-link">
              Timeline
            </Link>
            {plan?.status === 'submitted' ? (
              <Link href={`/runs/${runId}/plan`} className={linkButton('primary')}>
                Review plan for approval
              </Link>
            ) : plan?.status === 'approved' ? (
              canReplay ? (
                <Link href={`/runs/${runId}/replay`} className={linkButton('secondary')} data-testid="force-replay">
                  Force replay
                </Link>
              ) : (
                // Read-only roles see the run's replays and reports, not an action they cannot take.
                <Link href={`/runs/${runId}/replay`} className={linkButton('ghost')} data-testid="view-replays">
                  Replays and reports
                </Link>
              )
            ) : null}
          </div>
        }
      />
      <LiveRefresh runId={runId} topics={['effect', 'plan', 'replay', 'run']} />
      <div className="mb-4 grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Stat
          label="Status"
          value={
            <span data-testid="run-status">
              <Badge tone={SHOWN_RUN_STATUS_TONE[status] ?? 'zinc'}>{status}</Badge>
            </span>
          }
          hint={
            status !== header.status
              ? 'the agent crashed; a forced replay of the run has finished'
              : header.toolHistoryComplete
                ? 'tool history complete'
                : 'tool history incomplete: replays go through this console (F6)'
          }
        />
        <Stat
          label="Approved targets"
          value={plan ? plan.itemCount.toLocaleString('en-US') : '—'}
          hint={
            plan
              ? `plan ${plan.status}${plan.approvedAt ? ` by ${plan.approvedByLabel ?? plan.approvedById} at ${formatTime(plan.approvedAt)}` : ''}`
              : 'no plan submitted'
          }
        />
        <Stat
          label="Exactly once (P4)"
          value={<ExactlyOnce value={header.exactlyOnce} />}
          hint="approved targets with exactly one done effect"
        />
        <Stat label="Effects claimed" value={claimed.toLocaleString('en-US')} hint="keys this run claimed, any state" />
      </div>
      <Card title="Targets by state" className="mb-4">
        <StateBar counts={header.counts} total={plan?.itemCount ?? claimed} showLegend />
      </Card>
      <Card
        title="Plan joined with the ledger (P3)"
        description={
          canRevoke || canBump
            ? 'Every approved target with its state, epoch and who changed it last. Select rows for bulk revoke or epoch bump; a target never sent can be revoked before a replay (S5).'
            : 'Every approved target with its state, epoch and who changed it last.'
        }
      >
        {!plan && table.view !== 'not_in_plan' ? (
          <EmptyState title="This run has no plan yet">
            The runtime submits the plan (POST /api/v1/runs/:id/plan); it then appears under Plans to approve.
          </EmptyState>
        ) : (
          <RunTable
            rows={table.rows}
            next={table.next}
            canRevoke={canRevoke}
            canBump={canBump}
            planApproved={planApproved}
          />
        )}
        <div className="mt-2">
          <RowsPerPage path={`/runs/${runId}`} sp={sp} />
        </div>
      </Card>
    </>
  );
}
