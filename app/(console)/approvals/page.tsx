import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { canOnEach } from '@/lib/auth/grants.ts';
import { approvalExpiryText } from '@/lib/approvals/expiry.ts';
import { approvalsPage } from '@/lib/read-models/admin.ts';
import { ApprovalActions, ApprovalItems } from '@/app/(console)/_components/approval-actions.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { plural } from '@/lib/plural.ts';

export const metadata: Metadata = { title: 'Four-eyes approvals' };

const TONE = { open: 'amber', approved: 'green', rejected: 'red', expired: 'zinc' } as const;

export default async function ApprovalsPage() {
  const { user, db, scope } = await requireViewer();
  const rows = await approvalsPage(db, scope);
  // Per request: the operator role on every workflow it touches, as the server checks (Z1).
  const canDecide = (workflows: readonly string[]) => canOnEach(user.grants, 'effect.bump.approve', workflows);
  return (
    <>
      <PageHeader title="Four-eyes approvals" description={approvalExpiryText()} />
      <LiveRefresh topics={['approval']} />
      <Card>
        {rows.length === 0 ? (
          <EmptyState title="No requests">
            Requests appear when an operator asks for an epoch bump on a run or a target.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-zinc-100">
            {rows.map((r) => (
              <li
                key={r.id}
                id={`approval-${r.id}`}
                className="py-3"
                data-testid="approval-row"
                data-status={r.status}
                data-workflows={r.workflows.join(' ')}
              >
                <div className="flex flex-wrap items-start justify-between gap-3">
                  <div className="text-sm">
                    <div className="flex items-center gap-2">
                      <Badge tone={TONE[r.status as keyof typeof TONE] ?? 'zinc'}>{r.status}</Badge>
                      {r.kind === 'replay' ? (
                        <b>Forced replay of {plural(r.count, 'target')}</b>
                      ) : (
                        <b>Epoch bump of {plural(r.count, 'key')}</b>
                      )}
                      {r.runId && (
                        <Link href={`/runs/${r.runId}`} className="text-xs text-blue-700 underline">
                          run {r.runName ?? r.runId.slice(0, 8)}
                        </Link>
                      )}
                    </div>
                    <div className="mt-1 text-xs text-zinc-600">
                      Requested by {r.requestedBy} at <Time value={r.requestedAt} /> · expires{' '}
                      <Time value={r.expiresAt} />
                      {r.decidedBy ? (
                        <>
                          {' '}
                          · decided by {r.decidedBy} at <Time value={r.decidedAt} />
                        </>
                      ) : null}
                    </div>
                    <div className="mt-1 text-sm">Reason: {r.reason}</div>
                    {r.decidedBy && (r.status === 'approved' || r.status === 'rejected') && (
                      <div className="mt-1 text-sm" data-testid="decision">
                        {r.status === 'rejected' ? 'Rejected' : 'Approved'} by <b>{r.decidedBy}</b>
                        {r.decisionNote ? <>: {r.decisionNote}</> : r.status === 'approved' ? ' (no comment)' : null}
                      </div>
                    )}
                    {r.kind === 'replay' && r.runId && (
                      <div className="mt-1 text-xs">
                        <Link
                          className="text-blue-700 underline"
                          href={`/runs/${r.runId}/replay`}
                          data-testid="open-replay"
                        >
                          Open the replay to review the set and decide
                        </Link>
                      </div>
                    )}
                    {r.kind !== 'replay' && (
                      <details className="mt-1 text-xs" open={r.status === 'open'}>
                        <summary className="cursor-pointer text-zinc-600">Targets in this set ({r.count})</summary>
                        <div className="mt-1">
                          <ApprovalItems items={r.items} count={r.count} />
                        </div>
                      </details>
                    )}
                  </div>
                  {r.status === 'open' && canDecide(r.workflows) && r.kind !== 'replay' && (
                    <ApprovalActions
                      requestId={r.id}
                      setHash={r.setHash}
                      count={r.count}
                      own={r.requestedById === user.id}
                      status={r.status}
                      items={r.items}
                    />
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}
