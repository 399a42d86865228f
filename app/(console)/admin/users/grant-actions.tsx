'use client';
// Adding and removing a person's roles per workflow (Z1). Both are server actions that admins only
// may call; each change is audited with the admin's reason.
import { addGrantAction, removeGrantAction } from '@/app/actions/admin.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';

const ROLE_OPTIONS = ['operator', 'support', 'auditor', 'admin'].map((r) => ({ value: r, label: r }));

export function AddGrant({ userId, email, workflows }: { userId: string; email: string; workflows: string[] }) {
  return (
    <ActionDialog
      trigger="Grant role"
      testId={`grant-${email}`}
      title={`Grant a role to ${email}`}
      description="The role counts on the chosen workflow only, or on every workflow when none is named. It applies on their next request."
      fields={[
        { name: 'role', label: 'Role', type: 'select', options: ROLE_OPTIONS, defaultValue: 'operator' },
        {
          name: 'workflow',
          label: 'Workflow',
          placeholder: 'empty or * for all workflows',
          hint: workflows.length ? `Workflows with runs: ${workflows.join(', ')}` : undefined,
        },
        {
          name: 'newWorkflow',
          label: 'New workflow',
          type: 'checkbox',
          hint: 'Tick when the workflow has not run yet; otherwise a name without runs is refused as a likely typo.',
        },
        { name: 'reason', label: 'Reason', type: 'textarea', required: true },
      ]}
      submitLabel="Grant"
      action={addGrantAction}
      baseInput={{ userId }}
      success={(g) => `Granted ${g.role} on ${g.workflow ?? 'all workflows'}.`}
    />
  );
}

export function RemoveGrant({ grantId, label }: { grantId: string; label: string }) {
  return (
    <ActionDialog
      trigger="Remove"
      triggerVariant="ghost"
      testId={`ungrant-${label}`}
      title={`Remove ${label}`}
      description="Their next request no longer has this role. The last all-workflows admin cannot be removed."
      fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
      submitLabel="Remove"
      submitVariant="danger"
      action={removeGrantAction}
      baseInput={{ grantId }}
      success={() => 'Removed.'}
    />
  );
}
