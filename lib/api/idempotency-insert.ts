// Group commit for creating Idempotency-Key records (Z5): a reservation (the request is about to run
// its operation) or a record stored with its answer at once (an answer that changed nothing, known
// before any reservation: lib/api/handler.ts). Inserts made at the same moment share one statement and
// one commit (lib/db/group-commit.ts); each caller learns whether its insert took the key only after
// that commit. The same key twice in one batch behaves as two requests one after the other: the first
// (in submission order) takes the key, the second finds it taken, exactly as ON CONFLICT DO NOTHING
// decides between separate statements.
import type pg from 'pg';
import { sqlPool, sqlRows, type Db } from '../db/client.ts';
import { GroupCommit } from '../db/group-commit.ts';

export interface RecordInsert {
  scope: string;
  key: string;
  hash: string;
  /** The stored answer (status and JSON text), or null for a reservation. */
  answer: { status: number; body: string } | null;
}

// Rows go in in submission order (ORDER BY ord), so of two rows with one key the first is inserted
// and the second conflicts with it; each inserted row is handed back to the first submitter of its key.
const INSERT_BATCH_SQL = `
  WITH v AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::jsonb[])
      WITH ORDINALITY AS v(scope, key, request_hash, status, body, ord)
  ), inserted AS (
    INSERT INTO idempotency_record (scope, key, request_hash, response_status, response_body, completed_at)
    SELECT scope, key, request_hash, status, body, CASE WHEN status IS NULL THEN NULL ELSE now() END
      FROM v ORDER BY ord
    ON CONFLICT (scope, key) DO NOTHING
    RETURNING id::text AS id, scope, key
  ), first AS (
    SELECT DISTINCT ON (scope, key) ord, scope, key FROM v ORDER BY scope, key, ord
  )
  SELECT first.ord::int AS ord, inserted.id FROM inserted JOIN first USING (scope, key)`;

function params(items: RecordInsert[]): unknown[] {
  return [
    items.map((i) => i.scope),
    items.map((i) => i.key),
    items.map((i) => i.hash),
    items.map((i) => i.answer?.status ?? null),
    items.map((i) => i.answer?.body ?? null),
  ];
}

/** The record's id per item, in item order: null where the key was already taken. */
async function insertBatch(run: (values: unknown[]) => Promise<{ ord: number; id: string }[]>, items: RecordInsert[]) {
  const ids: (string | null)[] = items.map(() => null);
  for (const row of await run(params(items))) ids[row.ord - 1] = row.id;
  return ids;
}

function inserter(pool: pg.Pool): GroupCommit<RecordInsert, string | null> {
  const run = async (values: unknown[]) =>
    (
      await pool.query<{ ord: number; id: string }>({
        name: 'idempotency_insert_batch',
        text: INSERT_BATCH_SQL,
        values,
      })
    ).rows;
  return new GroupCommit<RecordInsert, string | null>({
    // As for completions (idempotency-complete.ts): small rows, so a few wide batches.
    maxInFlight: Math.max(1, Math.floor((pool.options.max ?? 10) / 4)),
    maxBatch: 128,
    minBatch: 4,
    runOne: async (item) => (await insertBatch(run, [item]))[0]!,
    runBatch: (items) => insertBatch(run, items),
  });
}

const inserters = new WeakMap<pg.Pool, GroupCommit<RecordInsert, string | null>>();

/** Inserts the record; resolves, once committed, to its id, or to null when the key was taken. */
export async function insertRecord(db: Db, item: RecordInsert): Promise<string | null> {
  const pool = sqlPool(db);
  if (!pool) return (await insertBatch((values) => sqlRows(db, INSERT_BATCH_SQL, values), [item]))[0]!;
  let group = inserters.get(pool);
  if (!group) inserters.set(pool, (group = inserter(pool)));
  return group.submit(item);
}
