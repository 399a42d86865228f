// Group commit for completing Idempotency-Key records (Z5): every POST of an agent ends by storing
// its answer, and under load those one-row UPDATEs were a third of the API's statements, each with
// its own commit. Completions made at the same moment share one statement and one commit
// (lib/db/group-commit.ts), and each request is answered only after the commit that stores its
// answer, exactly as before: a retry still finds the stored response.
import type pg from 'pg';
import { sqlRows, sqlPool, type Db } from '../db/client.ts';
import { GroupCommit } from '../db/group-commit.ts';

interface Completion {
  id: string;
  status: number;
  /** The answer as JSON text. */
  body: string;
}

const COMPLETE_SQL = `
  UPDATE idempotency_record SET response_status = $2::int, response_body = $3::jsonb, completed_at = now()
   WHERE id = $1::bigint`;
const COMPLETE_BATCH_SQL = `
  UPDATE idempotency_record r
     SET response_status = v.status, response_body = v.body, completed_at = now()
    FROM unnest($1::bigint[], $2::int[], $3::jsonb[]) AS v(id, status, body)
   WHERE r.id = v.id`;

function completer(pool: pg.Pool): GroupCommit<Completion, void> {
  return new GroupCommit<Completion, void>({
    // One statement at a time per quarter of the pool: completions are small, so a few wide batches
    // beat many narrow ones.
    maxInFlight: Math.max(1, Math.floor((pool.options.max ?? 10) / 4)),
    maxBatch: 128,
    minBatch: 4,
    runOne: async (c) => {
      await pool.query({ name: 'idempotency_complete', text: COMPLETE_SQL, values: [c.id, c.status, c.body] });
    },
    runBatch: async (batch) => {
      await pool.query({
        name: 'idempotency_complete_batch',
        text: COMPLETE_BATCH_SQL,
        values: [batch.map((c) => c.id), batch.map((c) => c.status), batch.map((c) => c.body)],
      });
      return batch.map(() => undefined);
    },
  });
}

const completers = new WeakMap<pg.Pool, GroupCommit<Completion, void>>();

/** Stores a request's answer on its record; resolves once that is committed. */
export async function completeRecord(db: Db, id: string, status: number, body: string): Promise<void> {
  const pool = sqlPool(db);
  if (!pool) {
    await sqlRows(db, COMPLETE_SQL, [id, status, body]);
    return;
  }
  let group = completers.get(pool);
  if (!group) completers.set(pool, (group = completer(pool)));
  await group.submit({ id, status, body });
}
