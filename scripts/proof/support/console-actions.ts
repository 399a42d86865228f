// The mutating console server actions, each called on fresh objects: the rows of the authorization
// matrices (scripts/proof/parts/security.ts and ./workflow-matrix.ts), the same calls as
// tests/integration/console-authz.test.ts.
import { suffix } from '@/tests/helpers/factories.ts';
import { seenOf, seenOfKeys } from '@/tests/helpers/seen.ts';
import { summarizeSet } from '@/lib/replay/set.ts';
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
        return a.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash, seenStatus: 'submitted' });
      },
    },
    {
      name: 'revokeAction',
      permission: 'effect.revoke',
      call: async () => {
        const { key } = await fx.key('done');
        return a.revokeAction({ keys: [key], reason: 'customer asked', seen: await seenOfKeys(env.db, [key]) });
      },
    },
    {
      name: 'resolveUnknownAction',
      permission: 'effect.resolve',
      call: async () => {
        const { key } = await fx.key('unknown');
        return a.resolveUnknownAction({
          key,
          outcome: 'sent',
          receipt: 'msg_9',
          reason: 'seen in provider log',
          seen: await seenOf(env.db, key),
        });
      },
    },
    {
      name: 'requestBumpAction',
      permission: 'effect.bump.request',
      call: async () => {
        const { key } = await fx.key('done');
        return a.requestBumpAction({ keys: [key], reason: 'resend', seen: await seenOfKeys(env.db, [key]) });
      },
    },
    {
      name: 'decideBumpAction',
      permission: 'effect.bump.approve',
      call: async () => {
        const r = await fx.bumpRequest();
        return a.decideBumpAction({
          requestId: r.requestId,
          setHash: r.setHash,
          decision: 'approve',
          seenStatus: 'open',
        });
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
      call: async () => {
        const runId = await fx.approvedRun();
        const { setHash } = await summarizeSet(env.db, runId);
        return a.requestReplayAction({ runId, confirmCount: 1, reason: 'crashed run', setHash });
      },
    },
    {
      name: 'approveReplayAction',
      permission: 'replay.approve',
      call: async () => {
        const r = await fx.replay('awaiting_approval');
        return a.approveReplayAction({
          approvalRequestId: r.approvalRequestId!,
          setHash: r.setHash,
          seenStatus: 'open',
        });
      },
    },
    {
      name: 'rejectReplayAction',
      permission: 'replay.approve',
      call: async () => {
        const r = await fx.replay('awaiting_approval');
        return a.rejectReplayAction({
          approvalRequestId: r.approvalRequestId!,
          reason: 'wrong run',
          seenStatus: 'open',
        });
      },
    },
    {
      name: 'startReplayAction',
      permission: 'replay.control',
      call: async () =>
        a.startReplayAction({ replayId: (await fx.replay('approved')).replayId, seenStatus: 'approved' }),
    },
    {
      name: 'pauseReplayAction',
      permission: 'replay.control',
      call: async () => a.pauseReplayAction({ replayId: (await fx.replay('running')).replayId, seenStatus: 'running' }),
    },
    {
      name: 'resumeReplayAction',
      permission: 'replay.control',
      call: async () => a.resumeReplayAction({ replayId: (await fx.replay('paused')).replayId, seenStatus: 'paused' }),
    },
    {
      name: 'cancelReplayAction',
      permission: 'replay.control',
      call: async () =>
        a.cancelReplayAction({
          replayId: (await fx.replay('awaiting_approval')).replayId,
          reason: 'not now',
          seenStatus: 'awaiting_approval',
        }),
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
