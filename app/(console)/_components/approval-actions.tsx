'use client';
import { decideBumpAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';

export function ApprovalActions({
  requestId,
  setHash,
  count,
  own,
  status,
}: {
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
          title={`Approve the bump of ${count} key(s)`}
          description="The bumps run now, each re-checking its epoch; a key that changed meanwhile is reported, not bumped."
          preview={
            <span>
              Bound to set hash <span className="mono text-xs break-all">{setHash}</span>
            </span>
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
