// An outcome report's answer stored with its Idempotency-Key record (Z5) in the statement that makes
// the transition, instead of a completion of its own: measured, the completion was one of the three
// statements and commits of every outcome report. The write runs only when the transition is accepted
// (the transition's gate); a refused one is answered and its record completed or freed the usual way.
// The stored body is the answer the API gives (changedAt as an ISO 8601 UTC time with milliseconds,
// as JSON.stringify writes a Date); the application compares it with its own and completes the record
// again should they ever differ (idempotency.ts runReserved).
import type { AlongsideWrite } from '../ledger/commands/transition-effect.ts';

const CTES = `answer_record AS (
    UPDATE idempotency_record r
       SET response_status = 200, completed_at = now(),
           response_body = jsonb_build_object(
             'key', $2::text, 'epoch', t.epoch, 'from', t.from_state, 'state', t.state, 'changedBy', t.changed_by,
             'changedAt', to_char(t.changed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'receipt', t.receipt)
      FROM t
     WHERE r.id = $1::bigint AND t.ok AND r.response_status IS NULL
    RETURNING r.response_status, r.response_body)`;

/** The write for the record `recordId` reserved by the request reporting on `key`. */
export function answerWithTransition(recordId: string, key: string): AlongsideWrite {
  return {
    name: 'idempotency_answer',
    ctes: CTES,
    values: [recordId, key],
    result: "(SELECT jsonb_build_object('status', response_status, 'body', response_body) FROM answer_record)",
  };
}
