// The mutating console server actions, each called on fresh objects: the rows of the authorization
// matrices (scripts/proof/parts/security.ts and ./workflow-matrix.ts), the same calls as
// tests/integration/console-authz.test.ts.
import { suffix } from '@/tests/helpers/factories.ts';
import type { Permission } from '@/lib/auth/permissions.ts';
import type { AbuseEnv } from './abuse-env.ts';
import type { Fixtures } from './abuse-fixtures.ts';

export type ActionResult = { ok: boolean; code?: string; error?: string };
export interface MatrixEntry {
  name: string;
  permission: Permission;
  call: () => Promise<ActionResult>;
}

export async function refusedFor(env: AbuseEnv, requestId: string): Promise<number> {
  return Number(
    (
      await env.owner<{ n: string }>(
        `SELECT count(*) AS n FROM audit_entry WHERE request_id = $1 AND outcome = 'refused'`,
        [requestId],
      )
    )[0]!.n,
  );
}

export async function matrixEntries(fx: Fixtures, env: AbuseEnv): Promise<MatrixEntry[]> {
  const a = {
    ...(await import('@/app/actions/ledger.ts')),
    ...(await import('@/app/actions/admin.ts')),
    ...(await import('@/app/actions/replay.ts')),
  };
  // The same calls as tests/integration/console-authz.test.ts, each on fresh objects.
  return [
    {
      name: 'approvePlanAction',
      permission: 'plan.approve',
      call: async () => {
        const p = await fx.submittedPlan();
        return a.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash });
      },
    },
    {
      name: 'revokeAction',
      permission: 'effect.revoke',
      call: async () => a.revokeAction({ keys: [(await fx.key('done')).key], reason: 'customer asked' }),
    },
    {
      name: 'resolveUnknownAction',
      permission: 'effect.resolve',
      call: async () =>
        a.resolveUnknownAction({
          key: (await fx.key('unknown')).key,
          outcome: 'sent',
          receipt: 'msg_9',
          reason: 'seen in provider log',
        }),
    },
    {
      name: 'requestBumpAction',
      permission: 'effect.bump.request',
      call: async () => a.requestBumpAction({ keys: [(await fx.key('done')).key], reason: 'resend' }),
    },
    {
      name: 'decideBumpAction',
      permission: 'effect.bump.approve',
      call: async () => {
        const r = await fx.bumpRequest();
        return a.decideBumpAction({ requestId: r.requestId, setHash: r.setHash, decision: 'approve' });
      },
    },
    {
      name: 'createUserAction',
      permission: 'users.manage',
      call: () =>
        a.createUserAction({
          email: `new-${suffix()}@example.com`,
          name: 'New',
          role: 'support',
          password: 'another-long-password',
        }),
    },
    {
      name: 'updateUserAction',
      permission: 'users.manage',
      call: async () => {
        const u = await env.newUser('support', 'moved');
        return a.updateUserAction({ userId: u.id, role: 'auditor', reason: 'moved team' });
      },
    },
    {
      name: 'createRuntimeKeyAction',
      permission: 'runtime_keys.manage',
      call: () => a.createRuntimeKeyAction({ name: `k-${suffix()}`, workflows: '*' }),
    },
    {
      name: 'revokeRuntimeKeyAction',
      permission: 'runtime_keys.manage',
      call: async () => a.revokeRuntimeKeyAction({ keyId: (await fx.runtimeKeyRow()).id, reason: 'rotated' }),
    },
    {
      name: 'requestReplayAction',
      permission: 'replay.request',
      call: async () =>
        a.requestReplayAction({ runId: await fx.approvedRun(), confirmCount: 1, reason: 'crashed run' }),
    },
    {
      name: 'approveReplayAction',
      permission: 'replay.approve',
      call: async () => {
        const r = await fx.replay('awaiting_approval');
        return a.approveReplayAction({ approvalRequestId: r.approvalRequestId!, setHash: r.setHash });
      },
    },
    {
      name: 'rejectReplayAction',
      permission: 'replay.approve',
      call: async () => {
        const r = await fx.replay('awaiting_approval');
        return a.rejectReplayAction({ approvalRequestId: r.approvalRequestId!, reason: 'wrong run' });
      },
    },
    {
      name: 'startReplayAction',
      permission: 'replay.control',
      call: async () => a.startReplayAction({ replayId: (await fx.replay('approved')).replayId }),
    },
    {
      name: 'pauseReplayAction',
      permission: 'replay.control',
      call: async () => a.pauseReplayAction({ replayId: (await fx.replay('running')).replayId }),
    },
    {
      name: 'resumeReplayAction',
      permission: 'replay.control',
      call: async () => a.resumeReplayAction({ replayId: (await fx.replay('paused')).replayId }),
    },
    {
      name: 'cancelReplayAction',
      permission: 'replay.control',
      call: async () =>
        a.cancelReplayAction({ replayId: (await fx.replay('awaiting_approval')).replayId, reason: 'not now' }),
    },
    {
      name: 'saveToolAction',
      permission: 'tools.manage',
      call: () =>
        a.saveToolAction({
          name: `tool_${suffix()}`,
          actions: 'a',
          targetType: 'email',
          provider: 'sandbox',
          generatedInputs: 'subject',
        }),
    },
  ];
}
