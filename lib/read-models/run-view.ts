// A run as the union of its plan and the ledger (P3): every planned target with its state, who
// changed it last and when, plus keys of the same trigger that are not in the plan ("sent but not in
// the plan"). Keys are looked up by trigger, so a retried run of the same event sees what is done.
import { z } from 'zod';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import { getRun } from '@/lib/ledger/catalog.ts';
import { parseInput } from '@/lib/ledger/validate.ts';
import type { CommandContext } from '@/lib/ledger/commands/common.ts';
import { exactlyOnceOfPlan } from './exactly-once.ts';

export const readRunInput = z.strictObject({ runId: z.uuid() });

export const RUN_TARGET_LIMIT = 10_000;

export interface RunTarget {
  key: string;
  tool: string;
  action: string;
  recordId: string;
  target: string;
  targetType: string;
  inPlan: boolean;
  /** null: approved (or submitted) but never claimed. */
  epoch: number | null;
  state: EffectState | null;
  changedBy: string | null;
  changedAt: Date | null;
  receipt: string | null;
  leaseExpiresAt: Date | null;
  /** pending with no holder (after a bump or a "not sent" resolution): the next claim takes it. */
  awaitingClaim: boolean;
  leaseExpired: boolean;
}

export interface RunView {
  run: {
    id: string;
    workflow: string;
    triggerId: string;
    status: string;
    toolHistoryComplete: boolean;
    createdBy: string;
    createdAt: Date;
  };
  plan: {
    id: string;
    status: string;
    itemCount: number;
    itemsHash: string;
    approvedAt: Date | null;
    submittedAt: Date;
  } | null;
  counts: Record<EffectState | 'not_started', number> & { total: number; inPlan: number; notInPlan: number };
  /** P4: approved targets with exactly one done effect / approved targets (null without an approved plan). */
  headline: { done: number; approved: number; ratio: number } | null;
  targets: RunTarget[];
  truncated: boolean;
}

interface Row {
  key: string;
  tool: string;
  action: string;
  record_id: string;
  target: string;
  target_type: string;
  in_plan: boolean;
  epoch: number | null;
  state: EffectState | null;
  changed_by: string | null;
  changed_at: Date | null;
  receipt: string | null;
  lease_expires_at: Date | null;
  awaiting_claim: boolean | null;
  lease_expired: boolean | null;
}

export async function readRun(ctx: CommandContext, raw: unknown, options: { limit?: number } = {}): Promise<RunView> {
  const input = parseInput(readRunInput, raw);
  const { db } = ctx;
  // A read model writes nothing: the caller checks the runtime's workflow scope (Z6) first and
  // audits a refusal there (requireRunScope, lib/ledger/scope.ts).
  const info = await getRun(db, input.runId);
  const run = await db.run.findUniqueOrThrow({ where: { id: info.id } });
  // This run's approved plan, else its latest plan, else (a retried run of the same event that did
  // not submit its own) the event's latest approved plan.
  const plan =
    (await db.plan.findFirst({ where: { runId: run.id, status: 'approved' }, orderBy: { submittedAt: 'desc' } })) ??
    (await db.plan.findFirst({ where: { runId: run.id }, orderBy: { submittedAt: 'desc' } })) ??
    (await db.plan.findFirst({
      where: { run: { eventId: run.eventId }, status: 'approved' },
      orderBy: { submittedAt: 'desc' },
    }));
  const planId = plan?.id ?? null;
  const limit = Math.min(options.limit ?? RUN_TARGET_LIMIT, RUN_TARGET_LIMIT);
  const rows = await db.$queryRaw<Row[]>`
    WITH p AS (SELECT * FROM plan_item WHERE plan_id = ${planId}::uuid),
         k AS (SELECT * FROM effect_key WHERE trigger_id = ${info.triggerId}),
         u AS (
           SELECT coalesce(p.key, k.key) AS key, coalesce(p.tool, k.tool) AS tool, coalesce(p.action, k.action) AS action,
                  coalesce(p.record_id, k.record_id) AS record_id, coalesce(p.target, k.target) AS target,
                  coalesce(p.target_type, k.target_type)::text AS target_type, p.id IS NOT NULL AS in_plan,
                  k.current_epoch, p.id AS plan_order
             FROM p FULL JOIN k ON k.key = p.key)
    SELECT u.key, u.tool, u.action, u.record_id, u.target, u.target_type, u.in_plan,
           e.epoch, e.state, e.changed_by, e.changed_at, e.receipt, e.lease_expires_at, e.awaiting_claim,
           (e.lease_expires_at IS NOT NULL AND e.lease_expires_at < now()) AS lease_expired
      FROM u LEFT JOIN effect e ON e.key = u.key AND e.epoch = u.current_epoch
     ORDER BY u.plan_order NULLS LAST, u.key
     LIMIT ${limit + 1}`;
  const truncated = rows.length > limit;
  const targets: RunTarget[] = rows.slice(0, limit).map((r) => ({
    key: r.key,
    tool: r.tool,
    action: r.action,
    recordId: r.record_id,
    target: r.target,
    targetType: r.target_type,
    inPlan: r.in_plan,
    epoch: r.epoch,
    state: r.state,
    changedBy: r.changed_by,
    changedAt: r.changed_at,
    receipt: r.receipt,
    leaseExpiresAt: r.lease_expires_at,
    awaitingClaim: r.awaiting_claim ?? false,
    leaseExpired: r.lease_expired ?? false,
  }));
  const [c] = await db.$queryRaw<Record<string, bigint>[]>`
    WITH p AS (SELECT key FROM plan_item WHERE plan_id = ${planId}::uuid),
         k AS (SELECT key, current_epoch FROM effect_key WHERE trigger_id = ${info.triggerId}),
         u AS (SELECT coalesce(p.key, k.key) AS key, p.key IS NOT NULL AS in_plan, k.current_epoch FROM p FULL JOIN k ON k.key = p.key)
    SELECT count(*) AS total, count(*) FILTER (WHERE u.in_plan) AS in_plan, count(*) FILTER (WHERE NOT u.in_plan) AS not_in_plan,
           count(*) FILTER (WHERE e.state IS NULL) AS not_started,
           count(*) FILTER (WHERE e.state = 'pending') AS pending, count(*) FILTER (WHERE e.state = 'done') AS done,
           count(*) FILTER (WHERE e.state = 'failed') AS failed, count(*) FILTER (WHERE e.state = 'unknown') AS unknown,
           count(*) FILTER (WHERE e.state = 'revoked') AS revoked, count(*) FILTER (WHERE e.state = 'stuck') AS stuck
      FROM u LEFT JOIN effect e ON e.key = u.key AND e.epoch = u.current_epoch`;
  const n = (k: string) => Number(c?.[k] ?? 0);
  const headline = plan?.status === 'approved' ? await exactlyOnceOfPlan(db, plan.id, plan.itemCount) : null;
  return {
    run: {
      id: run.id,
      workflow: run.workflow,
      triggerId: info.triggerId,
      status: run.status,
      toolHistoryComplete: run.toolHistoryComplete,
      createdBy: run.createdBy,
      createdAt: run.createdAt,
    },
    plan: plan
      ? {
          id: plan.id,
          status: plan.status,
          itemCount: plan.itemCount,
          itemsHash: plan.itemsHash,
          approvedAt: plan.approvedAt,
          submittedAt: plan.submittedAt,
        }
      : null,
    counts: {
      total: n('total'),
      inPlan: n('in_plan'),
      notInPlan: n('not_in_plan'),
      not_started: n('not_started'),
      pending: n('pending'),
      done: n('done'),
      failed: n('failed'),
      unknown: n('unknown'),
      revoked: n('revoked'),
      stuck: n('stuck'),
    },
    headline: headline && { done: headline.numerator, approved: headline.denominator, ratio: headline.ratio },
    targets,
    truncated,
  };
}
