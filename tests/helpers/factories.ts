// Small factories with random suffixes: each test makes the data it needs.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../lib/db/client.ts';
import type { Actor } from '../../lib/ledger/actor.ts';
import { createRun } from '../../lib/ledger/commands/create-run.ts';
import type { TargetType } from '../../lib/ledger/normalize.ts';

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

export async function makeTool(db: Db, overrides: Partial<{ name: string; actions: string[]; targetType: TargetType; provider: string; generatedInputs: string[]; leaseSeconds: number; distinctApprover: boolean }> = {}) {
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
           (SELECT string_agg(key || ':' || epoch || ':' || state || ':' || coalesce(receipt, ''), ',' ORDER BY key, epoch) FROM effect) AS states`;
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v]));
}
