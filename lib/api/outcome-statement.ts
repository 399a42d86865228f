// An outcome report in one round trip (SQL api_report_outcome): the caller's key row, the effect's
// workflow check, the Idempotency-Key reservation, the transition with its raw response and the
// stored answer. Measured: the report was two statements and two commits (the key read with the
// reservation, then the transition), and the pool, the protocol and the commit of each were a good
// part of the API server's and the database's time per effect (docs/BENCHMARKS.md).
// Every check that needs no database runs first, in the ledger's own code (transitionInput: S2 and
// the transition table's requirements). The statement writes nothing when a check it makes fails; the
// request then takes the usual way, which refuses it (401 or 403, audited) or answers it itself.
import { sqlRows, type Db } from '../db/client.ts';
import type { RequestMeta } from '../core/actor.ts';
import { requestJson } from '../core/actor.ts';
import {
  readTransitionRow,
  transitionInput,
  type TransitionRequest,
  type TransitionRow,
} from '../ledger/commands/transition-effect.ts';
import { responseValues } from '../ledger/commands/record-response.ts';
import { allowedSources } from '../ledger/transitions.ts';
import type { RuntimeKeyRow } from '../runtime-keys/index.ts';
import { RUNTIME_SCOPE_PREFIX } from './idempotency.ts';

const SQL = `
  SELECT * FROM api_report_outcome($1, $2, $3, $4, $5, $6, $7::int, $8::"EffectState", $9::"EffectState"[], $10, $11,
    $12, $13::jsonb, $14::uuid, $15::jsonb, $16::int, $17::jsonb, $18)`;

type Row = Omit<RuntimeKeyRow, 'id'> &
  Omit<TransitionRow, 'attempt_ok' | 'alongside'> & {
    id: string | null;
    stage: 'refused' | 'taken' | 'ran';
    record_id: string | null;
    attempt_ok: boolean | null;
    answer_status: number | null;
    answer_body: unknown;
  };

/** The caller's runtime key as presented: its prefix and the hash of the whole token. */
export interface PresentedKey {
  prefix: string;
  secretHash: string;
}

/** What the statement did: nothing ('refused': take the usual way; 'taken': the Idempotency-Key was
 *  used before, the earlier record decides), or ran the report under the reserved record. */
export type OneStatementReport =
  | { stage: 'refused' }
  | { stage: 'taken'; keyRow: RuntimeKeyRow }
  | { stage: 'ran'; keyRow: RuntimeKeyRow; recordId: string; answer(): ReportAnswer };

/** The report's answer (an OpResult of operations.ts), with what the statement stored with the record. */
export interface ReportAnswer {
  status: number;
  body: ReturnType<typeof outcomeAnswer>;
  stored: { status: number; body: unknown } | null;
}

/** The report's answer as the API gives it (the same fields opOutcome answers). */
export function outcomeAnswer(result: ReturnType<typeof readTransitionRow>) {
  const { key, epoch, from, state, changedBy, changedAt, receipt } = result;
  return { key, epoch, from, state, changedBy, changedAt, receipt };
}

/** Runs the runtime's report `req` in one statement; throws (nothing written) when its input fails a check. */
export async function reportInOneStatement(
  db: Db,
  caller: PresentedKey,
  idempotency: { key: string; hash: string },
  meta: RequestMeta,
  req: TransitionRequest,
): Promise<OneStatementReport> {
  const sources = allowedSources(req.to, 'runtime');
  if (sources.length === 0) return { stage: 'refused' };
  const { reason, receipt } = transitionInput('runtime', req);
  const [row] = await sqlRows<Row>(
    db,
    SQL,
    [
      caller.prefix,
      caller.secretHash,
      RUNTIME_SCOPE_PREFIX,
      idempotency.key,
      idempotency.hash,
      req.key,
      req.epoch ?? null,
      req.to,
      sources,
      req.action,
      reason,
      receipt,
      req.evidence ? JSON.stringify(req.evidence) : null,
      req.attemptId ?? null,
      JSON.stringify(requestJson(meta)),
      ...responseValues(req.response),
    ],
    'api_report_outcome',
  );
  if (!row || row.stage === 'refused' || row.id === null) return { stage: 'refused' };
  const { id, name, secret_hash, workflows, revoked_at, last_used_at } = row;
  const keyRow: RuntimeKeyRow = { id, name, secret_hash, workflows, revoked_at, last_used_at };
  if (row.stage === 'taken') return { stage: 'taken', keyRow };
  return {
    stage: 'ran',
    keyRow,
    recordId: row.record_id!,
    answer: () => {
      const result = readTransitionRow(req, { ...row, attempt_ok: row.attempt_ok ?? false });
      const stored = row.answer_status === null ? null : { status: row.answer_status, body: row.answer_body };
      return { status: 200, body: outcomeAnswer(result), stored };
    },
  };
}
