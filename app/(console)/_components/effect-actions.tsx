'use client';
// The decisions one can take on a single key, shown to the roles that may take them (the server
// checks again).
import { requestBumpAction, resolveUnknownAction, revokeAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { BUMPABLE_STATES, REVOCABLE_STATES } from '@/lib/ledger/transitions.ts';
import { StateBadge } from '@/components/ui/badge.tsx';

export function EffectActions({
  effectKey,
  target,
  state,
  epoch,
  changedBy,
  canRevoke,
  canBump,
  canResolve,
}: {
  effectKey: string;
  target: string;
  state: string;
  epoch: number;
  changedBy: string;
  canRevoke: boolean;
  canBump: boolean;
  canResolve: boolean;
}) {
  const preview = (to: string) => (
    <div className="space-y-1">
      <div className="font-medium">{target}</div>
      <div className="flex items-center gap-2 text-xs">
        epoch {epoch} <StateBadge state={state} /> → {to}
      </div>
      <div className="text-xs text-zinc-500">last changed by {changedBy}</div>
    </div>
  );
  const revocable = (REVOCABLE_STATES as readonly string[]).includes(state);
  const bumpable = (BUMPABLE_STATES as readonly string[]).includes(state);
  return (
    <div className="flex flex-wrap gap-2">
      {canResolve && state === 'unknown' && (
        <>
          <ActionDialog
            trigger="Resolve: sent"
            triggerVariant="primary"
            testId="resolve-sent"
            title="Resolve as sent"
            description="Unknown → done. Give the provider receipt, or a reference to the evidence that it was sent (S4)."
            preview={preview('done')}
            fields={[
              { name: 'receipt', label: 'Receipt or evidence reference', required: true, placeholder: 'msg_…' },
              { name: 'evidence', label: 'Evidence note', type: 'textarea' },
              { name: 'reason', label: 'Reason', type: 'textarea', required: true },
            ]}
            submitLabel="Mark as sent"
            action={resolveUnknownAction}
            baseInput={{ key: effectKey, epoch, outcome: 'sent' }}
            success={() => 'Resolved as sent.'}
          />
          <ActionDialog
            trigger="Resolve: not sent"
            testId="resolve-not-sent"
            title="Resolve as not sent"
            description="Unknown → pending: the next forced replay claims and sends it (S4)."
            preview={preview('pending (awaiting replay)')}
            fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
            submitLabel="Mark as not sent"
            action={resolveUnknownAction}
            baseInput={{ key: effectKey, epoch, outcome: 'not_sent' }}
            success={() => 'Resolved as not sent.'}
          />
        </>
      )}
      {canRevoke && revocable && (
        <ActionDialog
          trigger="Revoke"
          triggerVariant="danger"
          testId="revoke"
          title="Revoke this key"
          description="It will not be sent again at this epoch (S5). The reason goes on the audit trail."
          preview={preview('revoked')}
          fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
          submitLabel="Revoke"
          submitVariant="danger"
          action={revokeAction}
          baseInput={{ keys: [effectKey] }}
          success={() => 'Revoked.'}
        />
      )}
      {canBump && bumpable && (
        <ActionDialog
          trigger="Bump epoch"
          testId="bump"
          title="Bump the epoch"
          description="A new pending epoch supersedes this one so a forced replay sends again (E2). Four-eyes: another operator approves."
          preview={preview(`epoch ${epoch + 1}: pending`)}
          fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
          submitLabel="Request bump"
          action={requestBumpAction}
          baseInput={{ keys: [effectKey] }}
          success={(d) =>
            d.mode === 'requested' ? 'Requested: it awaits another operator on the Four-eyes page.' : 'Bumped.'
          }
        />
      )}
    </div>
  );
}
