import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { notFound } from 'next/navigation';
import { requireViewer } from '@/lib/auth/page.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { runHeader, runTable } from '@/lib/read-models/run-detail.ts';
import { runsWithFinishedReplay, shownRunStatus, SHOWN_RUN_STATUS_TONE } from '@/lib/read-models/run-status.ts';
import { RunTable } from '@/app/(console)/_components/run-table.tsx';
import { ExactlyOnce, StateBar } from '@/components/state-bar.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, Stat } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { one, pageSize, type SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';

export const metadata: Metadata = { title: 'Run' };

export default async function RunPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>;
  searchParams: Promise<SP>;
}) {
  const [{ runId }, sp, { user, db, scope }] = await Promise.all([params, searchParams, requireViewer()]);
  const header = await runHeader(db, runId, scope);
  if (!header) notFound();
  const plan = header.plan;
  const table = await runTable(
    db,
    runId,
    plan?.status === 'approved' || plan?.status === 'submitted' ? plan.id : null,
    {
      view: one(sp, 'view'),
      state: one(sp, 'state'),
      q: one(sp, 'q'),
      sort: one(sp, 'sort'),
      cursor: one(sp, 'cursor'),
      limit: pageSize(sp),
    },
  );
  const status = shownRunStatus(
    header.status,
    header.status === 'crashed' && (await runsWithFinishedReplay(db, [runId])).has(runId),
    header.exactlyOnce,
  );
  const claimed = Object.values(header.counts).reduce((a, b) => a + b, 0);
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
          plan?.status === 'submitted' ? (
            <Link href={`/runs/${runId}/plan`} className={linkButton('primary')}>
              Review plan for approval
            </Link>
          ) : plan?.status === 'approved' ? (
            <Link href={`/runs/${runId}/replay`} className={linkButton('secondary')} data-testid="force-replay">
              Force replay
            </Link>
          ) : null
        }
      />
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
              ? `plan ${plan.status}${plan.approvedAt ? ` by ${plan.approvedByLabel ?? plan.approvedById} at ${plan.approvedAt.toISOString().slice(0, 16).replace('T', ' ')}` : ''}`
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
        description="Every approved target with its state, epoch and who changed it last. Select rows for bulk revoke or epoch bump."
      >
        {!plan && table.view !== 'not_in_plan' ? (
          <EmptyState title="This run has no plan yet">
            The runtime submits the plan (POST /api/v1/runs/:id/plan); it then appears under Plans to approve.
          </EmptyState>
        ) : (
          <RunTable
            rows={table.rows.map((r) => ({ ...r, changedAt: r.changedAt ? r.changedAt.toISOString() : null }))}
            next={table.next}
            canRevoke={canOn(user.grants, 'effect.revoke', header.workflow)}
            canBump={canOn(user.grants, 'effect.bump.request', header.workflow)}
          />
        )}
        <div className="mt-2">
          <RowsPerPage path={`/runs/${runId}`} sp={sp} />
        </div>
      </Card>
    </>
  );
}
