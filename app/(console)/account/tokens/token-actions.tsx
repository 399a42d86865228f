'use client';
// Create and revoke buttons of the tokens page, with the console's action dialog: the new token is
// shown once inside the dialog, for the person to copy before closing it.
import { createAccessTokenAction, revokeAccessTokenAction } from '@/app/actions/tokens.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { ShownOnce } from '@/components/shown-once.tsx';

const EXPIRY_OPTIONS = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '366', label: 'One year' },
];

export function CreateToken() {
  return (
    <ActionDialog
      trigger="Create token"
      triggerVariant="primary"
      triggerSize="md"
      title="Create a personal access token"
      description="It acts as you, with exactly your roles and workflows, on the management API and the effect-ledger CLI. Every use is on the audit trail."
      fields={[
        { name: 'name', label: 'Name', required: true, placeholder: 'laptop CLI' },
        { name: 'expiresInDays', label: 'Expires after', type: 'select', options: EXPIRY_OPTIONS, required: true },
      ]}
      submitLabel="Create token"
      action={createAccessTokenAction}
      baseInput={{}}
      success={() => 'Created. Copy the token below now: it is shown only once.'}
      successDetail={(t) => <ShownOnce value={t.token} noun="token" testId="new-access-token" />}
    />
  );
}

export function RevokeToken({ tokenId, name }: { tokenId: string; name: string }) {
  return (
    <ActionDialog
      trigger="Revoke"
      triggerVariant="danger"
      title={`Revoke ${name}`}
      description="Calls with this token are refused from now on."
      fields={[]}
      submitLabel="Revoke token"
      submitVariant="danger"
      action={revokeAccessTokenAction}
      baseInput={{ tokenId }}
      success={() => 'Revoked.'}
    />
  );
}
