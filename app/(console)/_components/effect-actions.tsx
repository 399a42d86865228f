'use client';
// The decisions one can take on a single key, shown to the roles that may take them (the server
// checks again). Each dialog stays mounted whatever the state, so after a decision the page behind
// it shows the new state at once while the dialog still shows the outcome.
import { requestBumpAction, resolveUnknownAction, revokeAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { seenEffect, type StaleFacts } from '@/lib/ledger/seen-version.ts';
import { BUMPABLE_STATES, REVOCABLE_STATES } from '@/lib/ledger/transitions.ts';
import { StateBadge } from '@/components/ui/badge.tsx';

export function EffectActions({
  effectKey,
  target,
  state,
  epoch,
  changedBy,
  changedAt,
  canRevoke,
  canBump,
  canResolve,
  refreshBehind = true,
  onOpenChange,
  gone = false,
}: {
  effectKey: string;
  target: string;
  state: string;
  epoch: number;
  changedBy: string;
  /** With state and epoch, the version the person sees; every decision carries it (Z8). */
  changedAt: Date | string | null;
  canRevoke: boolean;
  canBump: boolean;
  canResolve: boolean;
  /** False where a decision removes the row that holds the dialog (the support queue): the page
   *  then refreshes when the dialog closes, after the person has read the outcome. */
  refreshBehind?: boolean;
  /** Told when one of the dialogs opens or closes (the support queue keeps that row on screen). */
  onOpenChange?: (open: boolean) => void;
  /** The row left the page's list while a dialog was open: someone else changed the target. */
  gone?: boolean;
}) {
  const notice = gone ? (
    <span data-testid="changed-while-looking">
      This target changed while you were looking: someone else decided it since this page showed it. Deciding now is
      refused and shows what changed, by whom and when.
    </span>
  ) : undefined;
  const common = { onOpenChange, notice };
  const preview = (to: string) => (
    <div className="space-y-1">
      <div className="font-medium">{target}</div>
      <div className="flex items-center gap-2 text-xs">
        epoch {epoch} <StateBadge state={state} /> → {to}
      </div>
      <div className="text-xs text-zinc-500">last changed by {changedBy}</div>
    </div>
  );
  const seen = seenEffect({ epoch, state, changedAt });
  // The bulk actions take versions per key; a stale refusal reports the one key's new version.
  const perKey = (facts: StaleFacts) => ({ seen: { [effectKey]: facts.retry.seen } });
  // 'none': a planned target nobody claimed; the caller offers it only on an approved plan (S5).
  const revocable = state === 'none' || (REVOCABLE_STATES as readonly string[]).includes(state);
  const bumpable = (BUMPABLE_STATES as readonly string[]).includes(state);
  const available = (applies: boolean) => (refreshBehind ? applies : applies ? undefined : false);
  return (
    <div className="flex flex-wrap gap-2">
      {canResolve && (
        <>
          <ActionDialog
            {...common}
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
            baseInput={{ key: effectKey, seen, outcome: 'sent' }}
            success={() => 'Resolved as sent.'}
            available={available(state === 'unknown')}
          />
          <ActionDialog
            {...common}
            trigger="Resolve: not sent"
            testId="resolve-not-sent"
            title="Resolve as not sent"
            description="Unknown → pending: the next forced replay claims and sends it (S4)."
            preview={preview('pending (awaiting replay)')}
            fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
            submitLabel="Mark as not sent"
            action={resolveUnknownAction}
            baseInput={{ key: effectKey, seen, outcome: 'not_sent' }}
            success={() => 'Resolved as not sent.'}
            available={available(state === 'unknown')}
          />
        </>
      )}
      {canRevoke && (
        <ActionDialog
          {...common}
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
          baseInput={{ keys: [effectKey], seen: { [effectKey]: seen } }}
          retryInput={perKey}
          success={() => 'Revoked.'}
          available={available(revocable)}
        />
      )}
      {canBump && (
        <ActionDialog
          {...common}
          trigger="Bump epoch"
          testId="bump"
          title="Bump the epoch"
          description="A new pending epoch supersedes this one so a forced replay sends again (E2). Four-eyes: another operator approves."
          preview={preview(`epoch ${epoch + 1}: pending`)}
          fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
          submitLabel="Request bump"
          action={requestBumpAction}
          baseInput={{ keys: [effectKey], seen: { [effectKey]: seen } }}
          retryInput={perKey}
          success={(d) =>
            d.mode === 'requested' ? 'Requested: it awaits another operator on the Four-eyes page.' : 'Bumped.'
          }
          available={available(bumpable)}
        />
      )}
    </div>
  );
}
