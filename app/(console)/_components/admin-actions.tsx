'use client';
import {
  createRuntimeKeyAction,
  createUserAction,
  revokeRuntimeKeyAction,
  saveToolAction,
  updateUserAction,
} from '@/app/actions/admin.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { ShownOnce } from '@/components/shown-once.tsx';

const ROLE_OPTIONS = ['operator', 'support', 'auditor', 'admin'].map((r) => ({ value: r, label: r }));

export function CreateUser() {
  return (
    <ActionDialog
      trigger="Add user"
      triggerVariant="primary"
      triggerSize="md"
      testId="add-user"
      title="Add a user"
      description="They sign in with this email and password, then choose their own; share it through a safe channel."
      fields={[
        { name: 'email', label: 'Email', type: 'email', required: true },
        { name: 'name', label: 'Name', required: true },
        { name: 'role', label: 'Role', type: 'select', options: ROLE_OPTIONS, defaultValue: 'operator' },
        {
          name: 'password',
          label: 'Initial password',
          type: 'password',
          required: true,
          hint: 'At least 12 characters.',
        },
        { name: 'reason', label: 'Reason', type: 'textarea', required: true, hint: 'Why this person needs access.' },
      ]}
      submitLabel="Create user"
      action={createUserAction}
      baseInput={{}}
      success={(d) => `Created ${d.email}.`}
    />
  );
}

export function EditUser({
  userId,
  email,
  role,
  disabled,
}: {
  userId: string;
  email: string;
  role: string;
  disabled: boolean;
}) {
  return (
    <div className="flex gap-2">
      <ActionDialog
        trigger="Change role"
        title={`Change the role of ${email}`}
        description="Takes effect on their next request: their session is revoked and they sign in again (Z4)."
        fields={[
          { name: 'role', label: 'Role', type: 'select', options: ROLE_OPTIONS, defaultValue: role },
          { name: 'reason', label: 'Reason', type: 'textarea', required: true },
        ]}
        submitLabel="Change role"
        action={updateUserAction}
        baseInput={{ userId }}
        success={() => 'Role changed.'}
      />
      <ActionDialog
        trigger={disabled ? 'Enable' : 'Disable'}
        triggerVariant={disabled ? 'secondary' : 'danger'}
        testId={`toggle-${email}`}
        title={`${disabled ? 'Enable' : 'Disable'} ${email}`}
        description={
          disabled ? 'They can sign in again.' : 'Their next request is refused, whatever session they hold (Z4).'
        }
        fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
        submitLabel={disabled ? 'Enable' : 'Disable'}
        submitVariant={disabled ? 'primary' : 'danger'}
        action={updateUserAction}
        baseInput={{ userId, disabled: !disabled }}
        success={() => (disabled ? 'Enabled.' : 'Disabled.')}
      />
    </div>
  );
}

export function CreateKey() {
  return (
    <div className="space-y-2">
      <ActionDialog
        trigger="Create runtime key"
        triggerVariant="primary"
        triggerSize="md"
        title="Create a runtime API key"
        description="Agent runtimes use it to create runs, submit plans, claim and report effects (Z6). It can never approve, revoke, bump or force."
        fields={[
          { name: 'name', label: 'Name', required: true, placeholder: 'campaign-runner-prod' },
          { name: 'workflows', label: 'Workflows (comma separated, * for all)', required: true },
          {
            name: 'newWorkflows',
            label: 'New workflow',
            type: 'checkbox',
            hint: 'Tick when a named workflow has not run yet; otherwise a name without runs is refused as a likely typo.',
          },
        ]}
        submitLabel="Create key"
        action={createRuntimeKeyAction}
        baseInput={{}}
        success={() => 'Created. Copy the secret below now: it is shown only once.'}
        successDetail={(k) => <ShownOnce value={k.secret} noun="secret" testId="new-key-secret" />}
      />
    </div>
  );
}

export function RevokeKey({ keyId, name }: { keyId: string; name: string }) {
  return (
    <ActionDialog
      trigger="Revoke"
      triggerVariant="danger"
      title={`Revoke ${name}`}
      description="Requests with this key are refused from now on."
      fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
      submitLabel="Revoke key"
      submitVariant="danger"
      action={revokeRuntimeKeyAction}
      baseInput={{ keyId }}
      success={() => 'Revoked.'}
    />
  );
}

export function SaveTool({
  tool,
}: {
  tool?: {
    name: string;
    actions: string[];
    targetType: string;
    provider: string;
    generatedInputs: string[];
    fourEyesBump: boolean;
    distinctApprover: boolean;
    supportsIdempotencyKey: boolean;
    supportsReceiptLookup: boolean;
    settleWindowSeconds: number;
    leaseSeconds: number;
  };
}) {
  return (
    <ActionDialog
      trigger={tool ? 'Edit' : 'Register tool'}
      triggerVariant={tool ? 'secondary' : 'primary'}
      triggerSize={tool ? 'sm' : 'md'}
      title={tool ? `Edit ${tool.name}` : 'Register a tool'}
      description="Keys are built from the trigger, the tool and action tag, the resolved record and one normalized target (K1); inputs the model writes never reach a key."
      fields={[
        { name: 'name', label: 'Name', required: true, defaultValue: tool?.name },
        {
          name: 'actions',
          label: 'Action tags (comma separated)',
          required: true,
          defaultValue: tool?.actions.join(', '),
        },
        {
          name: 'targetType',
          label: 'Target type',
          type: 'select',
          options: ['email', 'phone', 'url'].map((v) => ({ value: v, label: v })),
          defaultValue: tool?.targetType ?? 'email',
        },
        { name: 'provider', label: 'Provider', required: true, defaultValue: tool?.provider },
        {
          name: 'generatedInputs',
          label: 'Model-generated inputs (comma separated)',
          defaultValue: tool?.generatedInputs.join(', ') ?? 'subject, body',
        },
        {
          name: 'settleWindowSeconds',
          label: 'Settle window (s)',
          defaultValue: String(tool?.settleWindowSeconds ?? 60),
        },
        { name: 'leaseSeconds', label: 'Lease (s)', defaultValue: String(tool?.leaseSeconds ?? 300) },
        {
          name: 'supportsIdempotencyKey',
          label: 'Provider honours an idempotency key',
          type: 'checkbox',
          defaultValue: String(tool?.supportsIdempotencyKey ?? true),
        },
        {
          name: 'supportsReceiptLookup',
          label: 'Provider can look up a receipt',
          type: 'checkbox',
          defaultValue: String(tool?.supportsReceiptLookup ?? true),
        },
        {
          name: 'fourEyesBump',
          label: 'Four-eyes for epoch bumps',
          type: 'checkbox',
          defaultValue: String(tool?.fourEyesBump ?? true),
        },
        { name: 'fourEyesReplay', label: 'Four-eyes for forced replays', type: 'checkbox', defaultValue: 'true' },
        {
          name: 'distinctApprover',
          label: 'Plan approver must not be its author',
          type: 'checkbox',
          defaultValue: String(tool?.distinctApprover ?? true),
        },
      ]}
      submitLabel="Save"
      action={saveToolAction}
      baseInput={{}}
      success={() => 'Saved.'}
    />
  );
}
