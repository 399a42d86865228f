// Small factories with random suffixes: each test makes the data it needs.
import { randomUUID } from 'node:crypto';
import type { Db } from '@/lib/db/client.ts';
import type { Actor } from '@/lib/core/actor.ts';
import { claimEffect } from '@/lib/ledger/commands/claim-effect.ts';
import { completeEffect } from '@/lib/ledger/commands/complete-effect.ts';
import { createRun } from '@/lib/ledger/commands/create-run.ts';
import { failEffect } from '@/lib/ledger/commands/fail-effect.ts';
import { markStuck } from '@/lib/ledger/commands/mark-stuck.ts';
import { markUnknown } from '@/lib/ledger/commands/mark-unknown.ts';
import { resolveUnknown } from '@/lib/ledger/commands/resolve-unknown.ts';
import { revokeEffect } from '@/lib/ledger/commands/revoke-effect.ts';
import type { TargetType } from '@/lib/ledger/normalize.ts';
import type { EffectState } from '@/lib/db/generated/enums.ts';

export const suffix = () => randomUUID().slice(0, 8);

export function runtimeActor(workflows: string[] = ['*']): Actor {
  return { kind: 'runtime', id: randomUUID(), label: `runtime-${suffix()}`, workflows };
}
export const executorActor = (): Actor => ({ kind: 'executor', id: 'replay-executor', label: 'replay executor' });
export const reconcilerActor = (): Actor => ({ kind: 'reconciler', id: 'reconciler', label: 'reconciler' });
export const policyActor = (name: string): Actor => ({ kind: 'policy', id: name, label: `policy ${name}` });
export function userActor(role: 'admin' | 'operator' | 'support' | 'auditor', id: string = randomUUID()): Actor {
  return { kind: 'user', id, label: `${role}-${id.slice(0, 6)}@example.com`, role };
}

export async function makeTool(
  db: Db,
  overrides: Partial<{
    name: string;
    actions: string[];
    targetType: TargetType;
    provider: string;
    generatedInputs: string[];
    leaseSeconds: number;
    distinctApprover: boolean;
  }> = {},
) {
  return db.toolDefinition.create({
    data: {
      name: overrides.name ?? `send_email_${suffix()}`,
      actions: overrides.actions ?? ['campaign_welcome', 'receipt'],
      targetType: overrides.targetType ?? 'email',
      provider: overrides.provider ?? 'sandbox',
      generatedInputs: overrides.generatedInputs ?? ['subject', 'body'],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
      leaseSeconds: overrides.leaseSeconds ?? 300,
      distinctApprover: overrides.distinctApprover ?? true,
    },
  });
}

export async function makeRun(db: Db, workflow = `wf_${suffix()}`, triggerId = `evt_${suffix()}`) {
  return createRun({ db, actor: { kind: 'system', id: 'test', label: 'test setup' } }, { workflow, triggerId });
}

/** Row counts of every ledger table plus the audit head, to prove a refusal changed nothing. */
export async function snapshot(db: Db) {
  const [row] = await db.$queryRaw<Record<string, bigint | string | null>[]>`
    SELECT (SELECT count(*) FROM effect) AS effects, (SELECT count(*) FROM effect_key) AS keys,
           (SELECT count(*) FROM attempt) AS attempts, (SELECT count(*) FROM effect_transition) AS transitions,
           (SELECT count(*) FROM plan) AS plans, (SELECT count(*) FROM plan_item) AS plan_items,
           (SELECT count(*) FROM audit_entry WHERE outcome = 'ok') AS audit_ok,
           (SELECT string_agg(chain || ':' || seq || ':' || hash, ',' ORDER BY chain) FROM audit_chain_head WHERE chain NOT LIKE 'refused:%') AS heads,
           (SELECT string_agg(key || ':' || epoch || ':' || state || ':' || coalesce(receipt, '') || ':' || awaiting_claim || ':' || changed_by || ':' || changed_at, ',' ORDER BY key, epoch) FROM effect) AS states,
           (SELECT string_agg(key || ':' || current_epoch || ':' || state || ':' || changed_by || ':' || changed_at, ',' ORDER BY key) FROM effect_key) AS key_states,
           (SELECT string_agg(id || ':' || status || ':' || coalesce(approved_by_id::text, ''), ',' ORDER BY id) FROM plan) AS plan_states`;
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]));
}

/** A state an effect can be brought to through the commands; 'awaiting' is pending awaiting its
 *  claim (an unknown support resolved as "not sent"). */
export type TestState = EffectState | 'awaiting';

export interface TestEffect {
  key: string;
  runId: string;
  tool: string;
  input: { runId: string; tool: string; action: string; recordId: string; target: string };
  runtime: Actor;
}

/** Claims a fresh key and walks it to `state` through the real commands. */
export async function makeEffect(
  db: Db,
  state: TestState,
  setup: { tool?: string; runId?: string; runtime?: Actor; recordId?: string; target?: string } = {},
): Promise<TestEffect> {
  const tool = setup.tool ?? (await makeTool(db)).name;
  const runId = setup.runId ?? (await makeRun(db)).runId;
  const runtime = setup.runtime ?? runtimeActor();
  const n = suffix();
  const input = {
    runId,
    tool,
    action: 'campaign_welcome',
    recordId: setup.recordId ?? `customer-${n}`,
    target: setup.target ?? `user-${n}@example.com`,
  };
  const claim = await claimEffect({ db, actor: runtime }, input);
  if (!claim.claimed) throw new Error(`makeEffect: the fresh key ${claim.key} was not claimable`);
  const ref = { key: claim.key, epoch: claim.epoch };
  const ctx = { db, actor: runtime };
  const evidence = { status: 550, body: 'mailbox unavailable' };
  switch (state) {
    case 'pending':
      break;
    case 'done':
      await completeEffect(ctx, { ...ref, receipt: `msg-${n}`, attemptId: claim.attemptId });
      break;
    case 'failed':
      await failEffect(ctx, { ...ref, evidence, attemptId: claim.attemptId });
      break;
    case 'stuck':
      await markStuck(ctx, {
        ...ref,
        evidence: { status: 409, body: 'completion token lost' },
        attemptId: claim.attemptId,
      });
      break;
    case 'unknown':
      await markUnknown(ctx, { ...ref, evidence: { error: 'timeout after send' } });
      break;
    case 'revoked':
      await revokeEffect({ db, actor: userActor('operator') }, { ...ref, reason: 'customer asked us to withdraw it' });
      break;
    case 'awaiting':
      await markUnknown(ctx, ref);
      await resolveUnknown(
        { db, actor: userActor('support') },
        { ...ref, outcome: 'not_sent', reason: 'provider shows no such message' },
      );
      break;
    default:
      throw new Error(`makeEffect: unknown state ${String(state satisfies never)}`);
  }
  return { key: claim.key, runId, tool, input, runtime };
}

/** Audit entries of one chain, oldest first. */
export async function auditChain(db: Db, chain: string) {
  return db.auditEntry.findMany({ where: { chain }, orderBy: { seq: 'asc' } });
}
