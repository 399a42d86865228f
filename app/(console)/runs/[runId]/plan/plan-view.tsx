'use client';
// The plan page (P1, P2): what an approver decides on (the run's latest plan, its set hash and first
// targets) and the decision itself, read from the plan's view and kept live. Who may decide is settled
// by the view (lib/read-models/views/plan-page.ts); the decision carries the plan's hash and status as
// shown, so a plan that changed meanwhile is refused rather than decided blind (Z8).
import { Link } from '@/components/ui/link.tsx';
import { approvePlanAction, rejectPlanAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import type { SP } from '@/components/search-params.ts';
import { PageView } from '@/components/views/page-view.tsx';
import type { PlanPage } from '@/lib/read-models/views/plan-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { PlanTargets } from './plan-targets.tsx';

export function PlanView({ runId }: { runId: string }) {
  return <PageView<PlanPage> view="plan" runId={runId} title="Plan approval" Body={PlanBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). The plan page reads
 *  no search parameters; `sp` is taken as every view body takes it. */
export function PlanBody({ view, runId }: { view: Wire<PlanPage>; runId: string; sp: SP }) {
  const { plan, canApprove, selfAuthored, role } = view;
  return (
    <>
      <PageHeader
        title="Plan approval"
        description={
          <span>
            Run{' '}
            <Link className="mono text-blue-700 underline" href={`/runs/${runId}`}>
              {runId.slice(0, 8)}
            </Link>{' '}
            · workflow {plan.run.workflow} · event <span className="mono">{plan.run.event.triggerId}</span>
          </span>
        }
      />
      <LiveRefresh runId={runId} topics={['plan']} />
      <div className="mb-4 grid gap-4 lg:grid-cols-3">
        <Card title="What you approve" className="lg:col-span-2">
          <dl className="grid grid-cols-2 gap-x-6 gap-y-2 text-sm [&>dd]:min-w-0 [&>dd]:[overflow-wrap:anywhere]">
            <dt className="text-zinc-500">Status</dt>
            <dd>
              <Badge tone={plan.status === 'approved' ? 'green' : plan.status === 'rejected' ? 'red' : 'amber'}>
                {plan.status}
              </Badge>
            </dd>
            <dt className="text-zinc-500">Targets</dt>
            <dd className="tabular-nums" data-testid="plan-count">
              {plan.itemCount.toLocaleString('en-US')}
            </dd>
            <dt className="text-zinc-500">Tools</dt>
            <dd>{view.tools.join(', ')}</dd>
            <dt className="text-zinc-500">Submitted by</dt>
            <dd>
              {plan.authorLabel} ({plan.authorKind}) at <Time value={plan.submittedAt} />
            </dd>
            <dt className="text-zinc-500">Set hash</dt>
            <dd className="mono break-all text-xs">{plan.itemsHash}</dd>
            {plan.approvedAt && (
              <>
                <dt className="text-zinc-500">Approved by</dt>
                <dd>
                  {view.approverLabel} at <Time value={plan.approvedAt} />
                </dd>
              </>
            )}
          </dl>
        </Card>
        <Card title="Decision">
          {plan.status === 'rejected' ? (
            <p className="text-sm text-zinc-700 [overflow-wrap:anywhere]" data-testid="plan-rejected">
              Rejected by {view.rejecterLabel ?? 'an operator'}
              {plan.rejectedAt && (
                <>
                  {' '}
                  at <Time value={plan.rejectedAt} />
                </>
              )}
              : <q>{plan.rejectionReason}</q>. The agent must submit a new plan.
            </p>
          ) : plan.status !== 'submitted' ? (
            <p className="text-sm text-zinc-600">
              This plan is {plan.status}; an approved plan is frozen by the database (P1) and cannot change.
            </p>
          ) : !canApprove ? (
            <p className="text-sm text-zinc-600">Only an operator approves plans. Your role is {role}.</p>
          ) : selfAuthored && view.distinctApprover ? (
            <p className="text-sm text-amber-800">You submitted this plan; another operator must approve it (P2).</p>
          ) : (
            <div className="space-y-2 text-sm">
              <p>
                Approving freezes these {plan.itemCount.toLocaleString('en-US')} targets exactly as listed (hash above).
                The approval records you and the time (P2).
              </p>
              <ActionDialog
                trigger="Approve plan"
                triggerVariant="primary"
                triggerSize="md"
                testId="approve-plan"
                title="Approve and freeze this plan"
                preview={
                  <span>
                    {plan.itemCount.toLocaleString('en-US')} targets · hash{' '}
                    <span className="mono text-xs">{plan.itemsHash.slice(0, 16)}…</span>
                  </span>
                }
                fields={[{ name: 'reason', label: 'Note', type: 'textarea', hint: 'Optional: what you checked.' }]}
                submitLabel="Approve"
                action={approvePlanAction}
                baseInput={{ planId: plan.id, itemsHash: plan.itemsHash, seenStatus: plan.status }}
                successMessage="Plan approved and frozen."
              />
              <ActionDialog
                trigger="Reject plan"
                triggerVariant="danger"
                triggerSize="md"
                testId="reject-plan"
                title="Reject this plan"
                description="Nothing is frozen or sent; the agent has to submit a new plan."
                fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
                submitLabel="Reject"
                submitVariant="danger"
                action={rejectPlanAction}
                baseInput={{ planId: plan.id, itemsHash: plan.itemsHash, seenStatus: plan.status }}
                successMessage="Plan rejected."
              />
            </div>
          )}
        </Card>
      </div>
      <Card
        title={`Targets (first ${view.items.length} of ${plan.itemCount.toLocaleString('en-US')}, by target)`}
        description="The full list is on the run page with search and paging."
      >
        <PlanTargets rows={view.items} />
      </Card>
    </>
  );
}
