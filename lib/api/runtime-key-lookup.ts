// The runtime key rows the API's requests authenticate with, read in batches: lookups made in the
// same event-loop turn share one statement (lib/db/group-commit.ts; a lone lookup goes out at once).
// Every request still reads its key's row from the database, so a revocation stops the very next
// request (Z4): nothing is cached.
import type pg from 'pg';
import { sqlPool, sqlRows, type Db } from '../db/client.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { RUNTIME_KEY_COLUMNS, type RuntimeKeyRow } from '../runtime-keys/index.ts';

const LOOKUP_SQL = `
  SELECT u.ord::int AS ord, ${RUNTIME_KEY_COLUMNS}
    FROM unnest($1::text[]) WITH ORDINALITY AS u(wanted, ord) JOIN runtime_key k ON k.prefix = u.wanted`;

type Row = RuntimeKeyRow & { ord: number };

async function lookup(run: (values: unknown[]) => Promise<Row[]>, prefixes: string[]) {
  const rows: (RuntimeKeyRow | undefined)[] = prefixes.map(() => undefined);
  for (const { ord, ...row } of await run([prefixes])) rows[ord - 1] = row;
  return rows;
}

const batchers = new WeakMap<pg.Pool, GroupCommit<string, RuntimeKeyRow | undefined>>();

function batcher(pool: pg.Pool): GroupCommit<string, RuntimeKeyRow | undefined> {
  let group = batchers.get(pool);
  if (!group) {
    const run = async (values: unknown[]) =>
      (await pool.query<Row>({ name: 'runtime_key_lookup', text: LOOKUP_SQL, values })).rows;
    group = new GroupCommit<string, RuntimeKeyRow | undefined>({
      // A read holds no lock and waits for no flush: a free connection takes it at once. Only reads
      // arriving in the same turn share a statement (measured: capping reads at a quarter of the
      // pool, as for commits, made them queue behind each other and cost the replay a fifth).
      maxInFlight: pool.options.max ?? 10,
      maxBatch: 128,
      minBatch: 4,
      runOne: async (prefix) => (await lookup(run, [prefix]))[0],
      runBatch: (prefixes) => lookup(run, prefixes),
    });
    batchers.set(pool, group);
  }
  return group;
}

/** The row of the runtime key with this prefix, if there is one. */
export async function runtimeKeyRow(db: Db, prefix: string): Promise<RuntimeKeyRow | undefined> {
  const pool = sqlPool(db);
  if (!pool) return (await lookup((values) => sqlRows<Row>(db, LOOKUP_SQL, values), [prefix]))[0];
  return batcher(pool).submit(prefix);
}
