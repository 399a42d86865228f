// Group commit for claims (lib/db/group-commit.ts). A claim's commit (a WAL flush) was about half of
// its cost, so claims made at the same moment through one connection pool share one transaction:
// ledger_claim_batch (prisma/migrations/*_claim_batch) claims fresh keys set-wise, answers claimers
// of held keys from one read, runs the rest through ledger_claim in key order, and commits once.
// Every claimer still gets its own answer, and only after the commit that holds its pending row
// (S1), so nobody calls a provider on a claim that could still roll back.
import type pg from 'pg';
import { GroupCommit } from '../db/group-commit.ts';
import type { EffectState } from '../db/generated/enums.ts';
import type { KeyInput } from './keys.ts';

/** One claim: the key's intent (normalized target), its derived key and who claims it for which run. */
export interface ClaimCall extends KeyInput {
  key: string;
  runId: string;
  actorKind: string;
  actorId: string;
  actorLabel: string;
  leaseSeconds: number;
  /** Where the request came from (A1), as JSON text. */
  request: string;
  /** The agent API request's reserved Idempotency-Key record (Z5): completed with the claim's answer
   *  in the claim's own statement and transaction. */
  answerRecord?: string | null;
}

export interface ClaimRow {
  claimed: boolean;
  epoch: number;
  state: EffectState;
  attempt_id: string | null;
  idempotency_key: string;
  changed_by: string;
  changed_at: Date;
  /** The answer stored with the call's answerRecord, when it has one. */
  answer_status?: number | null;
  answer_body?: unknown;
}

export const CLAIM_COLUMNS = 'claimed, epoch, state, attempt_id, idempotency_key, changed_by, changed_at';

/** One claim, its placeholders in the order of claimParams. */
export const CLAIM_CALL =
  'ledger_claim($1, $2, $3, $4, $5, $6::"TargetType", $7, $8::uuid, $9::"ActorKind", $10, $11, $12::int, $13::jsonb)';

export const CLAIM_SQL = `
  SELECT ${CLAIM_COLUMNS}
  FROM ${CLAIM_CALL}`;

// The claim's answer as the agent API gives it (201 with the attempt to use, or 200 naming who holds
// the key; changedAt as JSON.stringify writes a Date), stored with the request's Idempotency-Key
// record in the claim's own transaction: measured, completing the record on its own was one of the
// claim's three statements and commits. The application compares it with its own answer and completes
// the record again should they ever differ (lib/api/idempotency.ts runReserved).
const ANSWER_STATUS = 'CASE WHEN c.claimed THEN 201 ELSE 200 END';
const answerBody = (key: string) => `CASE WHEN c.claimed
      THEN jsonb_build_object('claimed', true, 'key', ${key}, 'epoch', c.epoch, 'attemptId', c.attempt_id,
                              'idempotencyKey', c.idempotency_key)
      ELSE jsonb_build_object('claimed', false, 'key', ${key}, 'epoch', c.epoch, 'state', c.state,
                              'changedBy', c.changed_by,
                              'changedAt', to_char(c.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      END`;

/** One claim and its answer record ($14, null for none). */
const ONE_ANSWERED_SQL = `
  WITH c AS MATERIALIZED (SELECT ${CLAIM_COLUMNS} FROM ${CLAIM_CALL}),
  rec AS (
    UPDATE idempotency_record r
       SET response_status = ${ANSWER_STATUS}, response_body = ${answerBody('$1::text')}, completed_at = now()
      FROM c WHERE r.id = $14::bigint AND r.response_status IS NULL
    RETURNING r.response_status, r.response_body)
  SELECT c.*, rec.response_status AS answer_status, rec.response_body AS answer_body FROM c LEFT JOIN rec ON true`;

const BATCH_SQL = `
  WITH c AS MATERIALIZED (
    SELECT ord, ${CLAIM_COLUMNS}
    FROM ledger_claim_batch($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                            $8::uuid[], $9::text[], $10::text[], $11::text[], $12::int[], $13::jsonb[])),
  rec AS (
    UPDATE idempotency_record r
       SET response_status = ${ANSWER_STATUS}, response_body = ${answerBody('($1::text[])[c.ord]')},
           completed_at = now()
      FROM c WHERE r.id = ($14::bigint[])[c.ord] AND r.response_status IS NULL
    RETURNING r.id, r.response_status, r.response_body)
  SELECT c.*, rec.response_status AS answer_status, rec.response_body AS answer_body
    FROM c LEFT JOIN rec ON rec.id = ($14::bigint[])[c.ord]`;

/** The most claims one transaction carries: bounds how long its row locks are held. */
export const MAX_BATCH = 64;
/**
 * The fewest claims a batch is cut to when waiting claims are spread over free connections. A batch
 * costs about 1 ms of server CPU before its claims do any work, a fresh claim in it about 0.3 ms:
 * 16 waiting claims ran fastest as two batches of 8 (as one batch of 16 one CPU sat idle; as four
 * batches of 4 the fixed cost dominated).
 */
export const MIN_SPLIT = 8;

export function claimParams(c: ClaimCall): unknown[] {
  return [
    c.key,
    c.tool,
    c.action,
    c.recordId,
    c.target,
    c.targetType,
    c.triggerId,
    c.runId,
    c.actorKind,
    c.actorId,
    c.actorLabel,
    c.leaseSeconds,
    c.request,
  ];
}

/** Claims through one pool, grouped: see the top of this file. */
export class ClaimBatcher {
  private readonly group: GroupCommit<ClaimCall, ClaimRow>;

  /** maxInFlight: claim batches running at once, each on its own pooled connection. */
  constructor(pool: pg.Pool, maxInFlight: number) {
    this.group = new GroupCommit<ClaimCall, ClaimRow>({
      maxInFlight,
      maxBatch: MAX_BATCH,
      minBatch: MIN_SPLIT,
      runOne: async (call) =>
        (
          await pool.query<ClaimRow>({
            name: 'ledger_claim_answered',
            text: ONE_ANSWERED_SQL,
            values: [...claimParams(call), call.answerRecord ?? null],
          })
        ).rows[0]!,
      runBatch: async (calls) => {
        const column = <K extends keyof ClaimCall>(k: K) => calls.map((c) => c[k]);
        const values = [
          column('key'),
          column('tool'),
          column('action'),
          column('recordId'),
          column('target'),
          column('targetType'),
          column('triggerId'),
          column('runId'),
          column('actorKind'),
          column('actorId'),
          column('actorLabel'),
          column('leaseSeconds'),
          column('request'),
          calls.map((c) => c.answerRecord ?? null),
        ];
        const { rows } = await pool.query<ClaimRow & { ord: number }>({
          name: 'ledger_claim_batch_answered',
          text: BATCH_SQL,
          values,
        });
        const answers: ClaimRow[] = [];
        for (const { ord, ...claim } of rows) answers[ord - 1] = claim;
        return answers.filter(Boolean);
      },
    });
  }

  claim(call: ClaimCall): Promise<ClaimRow> {
    return this.group.submit(call);
  }
}

const batchers = new WeakMap<pg.Pool, ClaimBatcher>();

/** The pool's batcher: up to a quarter of its connections carry claim batches at once. */
export function claimBatcher(pool: pg.Pool): ClaimBatcher {
  let batcher = batchers.get(pool);
  if (!batcher) {
    batcher = new ClaimBatcher(pool, Math.max(1, Math.floor((pool.options.max ?? 10) / 4)));
    batchers.set(pool, batcher);
  }
  return batcher;
}
