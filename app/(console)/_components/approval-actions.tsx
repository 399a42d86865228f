'use client';
// A four-eyes bump request's decision: the approver sees each key's recipient, its state now and the
// epoch asked for (not only the set's hash) before approving or rejecting.
import { decideBumpAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { StateBadge } from '@/components/ui/badge.tsx';
import { Link } from '@/components/ui/link.tsx';
import { plural } from '@/lib/plural.ts';

/** One key of a request as the approver sees it. */
export interface ApprovalItemView {
  key: string;
  epoch: number;
  target: string | null;
  stateNow: string | null;
  epochNow: number | null;
}

/** The keys of a request: recipient (linked to its target page), state now, the epoch it bumps. */
export function ApprovalItems({ items, count }: { items: ApprovalItemView[]; count: number }) {
  return (
    <ul className="max-h-48 space-y-1 overflow-y-auto text-xs" data-testid="approval-items">
      {items.map((i) => (
        <li key={i.key} className="flex flex-wrap items-center gap-2" data-testid="approval-item">
          <Link className="font-medium text-blue-700 underline" href={`/target?key=${encodeURIComponent(i.key)}`}>
            {i.target ?? i.key}
          </Link>
          <span className="text-zinc-600">
            epoch {i.epoch} → {i.epoch + 1}
          </span>
          <span className="flex items-center gap-1 text-zinc-600">
            now <StateBadge state={i.stateNow} />
            {i.epochNow !== null && i.epochNow !== i.epoch ? ` at epoch ${i.epochNow}` : ''}
          </span>
        </li>
      ))}
      {count > items.length && <li className="text-zinc-500">…and {count - items.length} more</li>}
    </ul>
  );
}

export function ApprovalActions({
  requestId,
  setHash,
  count,
  own,
  status,
  items,
}: {
  items: ApprovalItemView[];
  /** The request's status as the card shows it; the decision carries it (Z8). */
  status: string;
  requestId: string;
  setHash: string;
  count: number;
  own: boolean;
}) {
  return (
    <div className="flex gap-2">
      {own ? (
        <span className="text-xs text-zinc-500">Your request: another operator must approve it (Z3).</span>
      ) : (
        <ActionDialog
          trigger="Approve"
          triggerVariant="primary"
          testId="approve-request"
          title={`Approve the bump of ${plural(count, 'key')}`}
          description="The bumps run now, each re-checking its epoch; a key that changed meanwhile is reported, not bumped."
          preview={
            <div className="space-y-2">
              <ApprovalItems items={items} count={count} />
              <p className="text-xs text-zinc-500">
                Bound to set hash <span className="mono break-all">{setHash}</span>
              </p>
            </div>
          }
          fields={[
            {
              name: 'reason',
              label: 'Comment (optional)',
              type: 'textarea',
              hint: 'Shown on the request and kept on the audit trail.',
            },
          ]}
          submitLabel="Approve and bump"
          action={decideBumpAction}
          baseInput={{ requestId, setHash, decision: 'approve', seenStatus: status }}
          success={(r) =>
            r.decision === 'approve'
              ? `${r.bumped} bumped${r.failed.length ? `, ${r.failed.length} skipped (state changed)` : ''}.`
              : 'Rejected.'
          }
        />
      )}
      <ActionDialog
        trigger="Reject"
        triggerVariant="ghost"
        title="Reject this request"
        testId="reject-request"
        fields={[
          {
            name: 'reason',
            label: 'Reason',
            type: 'textarea',
            required: true,
            hint: 'The requester sees it on the request.',
          },
        ]}
        submitLabel="Reject"
        action={decideBumpAction}
        baseInput={{ requestId, setHash, decision: 'reject', seenStatus: status }}
        success={() => 'Rejected.'}
      />
    </div>
  );
}
