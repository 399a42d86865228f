// The replay executor: one chunk job = a range of frozen replay items. For each item:
//   1. re-read the target's state; one that changed since confirmation is skipped and reported (F4),
//   2. wait for the provider's rate limit, then claim through the ledger like the runtime does (F3):
//      a lost claim sends nothing,
//   3. send with the (key, epoch) idempotency key (R2), store the raw response before parsing (R1),
//      then done with the receipt (S2), failed or stuck with the response as evidence (S3, S6).
// A call that provably sent nothing (connection refused) frees the key as failed and fails the job,
// which pg-boss retries: the replay stops and retries cleanly. An ambiguous call (timeout after the
// data went out, 5xx) stays pending for the reconciler, never retried (S4).
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import { appendAudit } from '../audit/append.ts';
import { claimEffect, completeEffect, failEffect, getTool, LedgerError, markStuck, recordResponse, type Actor } from '../ledger/index.ts';
import { isCallFailure, type ProviderRegistry, type RegisteredProvider } from '../providers/registry.ts';
import type { RawResponse } from '../providers/types.ts';
import { RateLimiter } from './rate-limit.ts';
import { exactlyOnce, FINGERPRINT_SQL, type ViewState } from './set.ts';
import type { ReplayChunk } from './jobs.ts';

export type ItemOutcome = 'sent' | 'skipped' | 'failed' | 'unknown' | 'interrupted';

export interface ExecutorDeps {
  db: Db;
  providers: ProviderRegistry;
  limiter?: RateLimiter;
  /** Items of one chunk sent at the same time (each still claims on its own). */
  itemConcurrency?: number;
  /** Content of a replayed message; defaults to a neutral text naming the action and record. */
  payload?: (item: { tool: string; action: string; recordId: string; target: string }) => Record<string, unknown>;
  log?: (line: string) => void;
}

export function executorActor(replayId: string): Actor {
  return { kind: 'executor', id: `replay:${replayId}`, label: `replay executor ${replayId}` };
}

/** Thrown to fail the chunk job so pg-boss retries it later (the provider is unreachable). */
export class RetryChunk extends Error {}

const defaultPayload = (i: { action: string; recordId: string }) => {
  const text = `This message was sent again by an operator's replay (${i.action}, record ${i.recordId}).`;
  return { subject: `${i.action.replace(/_/g, ' ')}`, text, body: text };
};

interface ItemRow {
  id: bigint;
  key: string;
  target: string;
  note: string | null;
  tool: string;
  action: string;
  record_id: string;
  view_state: ViewState;
  changed_by: string | null;
  fp: string;
  receipt: string | null;
  ours: boolean;
}

async function readItem(db: Db, runId: string, actorId: string, itemId: bigint): Promise<ItemRow | undefined> {
  const rows = await db.$queryRaw<ItemRow[]>`
    SELECT t.*, ${FINGERPRINT_SQL} AS fp FROM (
      SELECT ri.id, ri.key, ri.target, ri.note, ri.outcome, pi.tool, pi.action, pi.record_id,
             coalesce(k.current_epoch, 1) AS epoch,
             CASE WHEN k.key IS NULL THEN 'not_sent'
                  WHEN k.state = 'pending' AND e.awaiting_claim THEN 'awaiting_claim'
                  WHEN k.state = 'pending' THEN 'in_flight'
                  ELSE k.state::text END AS view_state,
             k.changed_by, k.changed_at, e.receipt,
             EXISTS (SELECT 1 FROM effect_transition tr WHERE tr.key = ri.key AND tr.actor_id = ${actorId} AND tr.to_state = 'pending') AS ours
        FROM replay_item ri
        JOIN LATERAL (SELECT pi.tool, pi.action, pi.record_id FROM plan_item pi JOIN plan p ON p.id = pi.plan_id AND p.status = 'approved'
                       WHERE pi.key = ri.key AND pi.run_id = ${runId}::uuid LIMIT 1) pi ON true
        LEFT JOIN effect_key k ON k.key = ri.key
        LEFT JOIN effect e ON e.key = k.key AND e.epoch = k.current_epoch
       WHERE ri.id = ${itemId} AND (ri.outcome IS NULL)) t`;
  return rows[0];
}

/** Records an item's outcome and moves the replay's counters in the same statement. An item left
 *  'interrupted' (its claim is ours but no handler finished it) may still get its real outcome. */
export async function setOutcome(db: Db, replayId: string, itemId: bigint, outcome: ItemOutcome, note: string): Promise<void> {
  const is = (o: ItemOutcome) => (outcome === o ? 1 : 0);
  await db.$executeRaw`
    WITH prev AS (SELECT id, outcome FROM replay_item WHERE id = ${itemId} FOR UPDATE),
    upd AS (
      UPDATE replay_item r SET outcome = ${outcome}, note = ${note.slice(0, 2000)}
        FROM prev
       WHERE r.id = prev.id AND (prev.outcome IS NULL OR (prev.outcome = 'interrupted' AND ${outcome} <> 'interrupted'))
      RETURNING prev.outcome AS was)
    UPDATE replay SET
      sent = sent + (SELECT count(*) FROM upd) * ${is('sent')}::int,
      skipped = skipped + (SELECT count(*) FROM upd) * ${is('skipped')}::int,
      failed = failed + (SELECT count(*) FROM upd) * ${is('failed')}::int,
      unknown = unknown + (SELECT count(*) FROM upd) * ${is('unknown') + is('interrupted')}::int - (SELECT count(*) FROM upd WHERE was = 'interrupted')
     WHERE id = ${replayId}::uuid AND EXISTS (SELECT 1 FROM upd)`;
}

export async function runChunk(deps: ExecutorDeps, chunk: ReplayChunk): Promise<{ processed: number; stoppedBy?: string }> {
  const { db } = deps;
  const replay = await db.replay.findUnique({ where: { id: chunk.replayId }, select: { id: true, runId: true, status: true } });
  if (!replay || replay.status !== 'running') return { processed: 0, stoppedBy: replay?.status ?? 'missing' };
  const actor = executorActor(replay.id);
  const ids = await db.$queryRaw<{ id: bigint }[]>`
    SELECT id FROM replay_item WHERE replay_id = ${replay.id}::uuid AND id BETWEEN ${BigInt(chunk.fromId)} AND ${BigInt(chunk.toId)} AND outcome IS NULL ORDER BY id`;
  let processed = 0;
  const parallel = Math.max(1, deps.itemConcurrency ?? 4);
  for (let i = 0; i < ids.length; i += parallel) {
    if (i > 0) {
      const now = await db.replay.findUnique({ where: { id: replay.id }, select: { status: true } });
      if (now?.status !== 'running') return { processed, stoppedBy: now?.status ?? 'missing' };
    }
    const results = await Promise.allSettled(ids.slice(i, i + parallel).map(({ id }) => processItem(deps, replay.id, replay.runId, actor, id)));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
    processed += results.length;
  }
  await completeIfDone(db, replay.id, replay.runId, actor);
  return { processed };
}

async function processItem(deps: ExecutorDeps, replayId: string, runId: string, actor: Actor, itemId: bigint): Promise<void> {
  const { db } = deps;
  const item = await readItem(db, runId, actor.id, itemId);
  if (!item) return; // decided meanwhile by another handler
  const frozen = item.note?.startsWith('frozen:') ? item.note.slice(7) : null;
  if (!item.ours) {
    if (item.fp !== frozen) {
      return setOutcome(db, replayId, itemId, 'skipped', `changed after confirmation: now ${item.view_state} by ${item.changed_by ?? 'nobody'} (was ${frozen}) (F4)`);
    }
  } else {
    // This replay claimed the key before (a handler that crashed or ran twice).
    switch (item.view_state) {
      case 'failed':
        if (item.changed_by !== actor.label) {
          return setOutcome(db, replayId, itemId, 'skipped', `changed after confirmation: failed by ${item.changed_by} after this replay's attempt (F4)`);
        }
        break; // our own freed claim (provider unreachable): claim again
      case 'in_flight':
        if (item.changed_by === actor.label) return setOutcome(db, replayId, itemId, 'interrupted', 'claimed by this replay, no outcome recorded: the reconciler decides after the lease (S4)');
        return setOutcome(db, replayId, itemId, 'skipped', `claimed by ${item.changed_by} after this replay's attempt`);
      case 'done':
        return setOutcome(db, replayId, itemId, 'sent', `receipt ${item.receipt}`);
      case 'unknown':
        return setOutcome(db, replayId, itemId, 'unknown', `unknown: ${item.changed_by} decided after this replay's attempt`);
      case 'stuck':
        return setOutcome(db, replayId, itemId, 'failed', 'stuck (S6)');
      case 'not_sent':
      case 'awaiting_claim':
      case 'revoked':
        return setOutcome(db, replayId, itemId, 'skipped', `changed after this replay's attempt: ${item.view_state} by ${item.changed_by}`);
      default:
        return item.view_state satisfies never;
    }
  }

  const tool = await getTool(db, item.tool);
  let provider: RegisteredProvider;
  try {
    provider = deps.providers.get(tool.provider);
  } catch (error) {
    // Nothing was claimed: the item stays open for a retry once the provider is configured.
    throw new RetryChunk((error as Error).message);
  }
  await deps.limiter?.acquire(tool.provider);
  const claim = await claimEffect({ db, actor }, { runId, tool: item.tool, action: item.action, recordId: item.record_id, target: item.target });
  if (!claim.claimed) {
    return setOutcome(db, replayId, itemId, 'skipped', `lost the claim: ${claim.state} by ${claim.changedBy} (F3)`);
  }
  const payload = (deps.payload ?? defaultPayload)({ tool: item.tool, action: item.action, recordId: item.record_id, target: claim.target });
  let raw: RawResponse;
  try {
    const timeout = (deps.providers.has(tool.provider) ? deps.providers.settings(tool.provider).sendTimeoutSeconds : undefined) ?? 30;
    raw = await provider.send({ key: claim.key, epoch: claim.epoch, idempotencyKey: claim.idempotencyKey, target: claim.target, payload }, AbortSignal.timeout(timeout * 1000));
  } catch (error) {
    if (isCallFailure(error) && error.providerSent === 'no') {
      await failEffect({ db, actor }, { key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId, evidence: { error: error.message, ...error.detail, sent: 'no' } });
      throw new RetryChunk(`provider ${tool.provider} unreachable: ${error.message}`);
    }
    // Ambiguous: the executor may not decide unknown; the key stays pending for the reconciler (S4).
    deps.log?.(`ambiguous send for ${claim.key}: ${(error as Error).message}`);
    return setOutcome(db, replayId, itemId, 'unknown', `ambiguous call, left pending for the reconciler: ${(error as Error).message}`);
  }
  await recordResponse({ db, actor }, { attemptId: claim.attemptId, status: raw.status, headers: raw.headers, body: raw.body });
  const verdict = provider.classify(raw);
  const ref = { db, actor };
  try {
    switch (verdict.outcome) {
      case 'done':
        await completeEffect(ref, { key: claim.key, epoch: claim.epoch, receipt: verdict.receipt, attemptId: claim.attemptId });
        return setOutcome(db, replayId, itemId, 'sent', `receipt ${verdict.receipt}`);
      case 'failed':
        await failEffect(ref, { key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId, evidence: verdict.evidence });
        if (verdict.evidence.unavailable === true) throw new RetryChunk(`provider ${tool.provider} unavailable (${raw.status})`);
        return setOutcome(db, replayId, itemId, 'failed', `rejected: ${JSON.stringify(verdict.evidence).slice(0, 500)}`);
      case 'stuck':
        await markStuck(ref, { key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId, evidence: verdict.evidence });
        return setOutcome(db, replayId, itemId, 'failed', 'stuck (S6)');
      case 'already_existed': {
        // R3: follow the pointer and record the prior object's state.
        const prior = provider.followReference ? await provider.followReference(verdict.reference).catch(() => null) : null;
        if (prior?.found && prior.state !== 'failed') {
          await completeEffect(ref, { key: claim.key, epoch: claim.epoch, receipt: prior.receipt, attemptId: claim.attemptId, evidence: { ...verdict.evidence, reference: verdict.reference } });
          return setOutcome(db, replayId, itemId, 'sent', `already existed: receipt ${prior.receipt}`);
        }
        if (prior?.found && prior.state === 'failed') {
          await markStuck(ref, { key: claim.key, epoch: claim.epoch, attemptId: claim.attemptId, evidence: { ...verdict.evidence, reference: verdict.reference, prior: 'failed' } });
          return setOutcome(db, replayId, itemId, 'failed', 'already existed as a failed object: stuck (R3, S6)');
        }
        return setOutcome(db, replayId, itemId, 'unknown', `already existed at ${verdict.reference}; the prior object could not be read, left pending for the reconciler`);
      }
      case 'unknown':
        return setOutcome(db, replayId, itemId, 'unknown', `ambiguous response ${raw.status}, left pending for the reconciler`);
      default:
        return verdict satisfies never;
    }
  } catch (error) {
    // The reconciler may have moved a slow send on (its lease expired): its decision stands.
    if (error instanceof LedgerError && error.code === 'invalid_transition') {
      return setOutcome(db, replayId, itemId, 'unknown', `${error.message} (decided by the reconciler meanwhile)`);
    }
    throw error;
  }
}

export async function completeIfDone(db: Db, replayId: string, runId: string, actor: Actor): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>(Prisma.sql`
      UPDATE replay SET status = 'completed', finished_at = now()
       WHERE id = ${replayId}::uuid AND status = 'running' AND sent + skipped + failed + unknown >= total RETURNING id`);
    if (rows.length === 0) return false;
    const r = await tx.replay.findUniqueOrThrow({ where: { id: replayId } });
    await appendAudit(tx, {
      chain: `run:${runId}`, actor, action: 'replay.complete', subjectType: 'replay', subjectId: replayId, runId, before: 'running', after: 'completed',
      detail: { sent: r.sent, skipped: r.skipped, failed: r.failed, unknown: r.unknown, total: r.total, exactlyOnceAfter: await exactlyOnce(tx, runId) },
    });
    return true;
  });
}
