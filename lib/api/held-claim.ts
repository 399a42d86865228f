// A claim's first statement: the caller's runtime key row, the claim key's held row and, when every
// check the statement can make passes, the request's Idempotency-Key record: stored with the losing
// claim's answer when the key is held (a replayed claim is then one round trip), reserved without an
// answer when it is not (the claim then runs under it; SQL ledger_claim_peek_store). Measured, a
// replayed claim was two round trips (the key read beside the peek, then the record's insert), and a
// winning claim reserved its record in a statement and a commit of its own; the requests of the same
// moment share this statement and its commit (lib/db/group-commit.ts). The runtime key's row is
// still read by every request (Z6: nothing cached); every check and every refusal stays where it was
// (lib/api/auth.ts, lib/ledger/commands/peek-claim.ts): the statement only decides what to store.
import type pg from 'pg';
import { sqlPool, sqlRows, type Db } from '../db/client.ts';
import { GroupCommit } from '../db/group-commit.ts';
import type { HeldRow } from '../ledger/commands/peek-claim.ts';
import type { RuntimeKeyRow } from '../runtime-keys/index.ts';
import { RUNTIME_SCOPE_PREFIX } from './idempotency.ts';

export interface HeldClaimRequest {
  prefix: string;
  secretHash: string;
  /** The run's workflow, which the key must cover for the record to be stored. */
  workflow: string;
  /** The claim key (derived on the server). */
  claimKey: string;
  idempotencyKey: string;
  requestHash: string;
}

export interface HeldClaimRead {
  /** The runtime key's row, if the prefix names one. */
  keyRow: RuntimeKeyRow | undefined;
  /** The claim key's row when it is held; undefined when a claim could take it. */
  held: HeldRow | undefined;
  /** The record stored with the losing claim's answer (body null: reserved for a claim that may win,
   *  which completes it), or null (a check failed, or the Idempotency-Key was used before). */
  stored: { id: string; body: unknown } | null;
}

type Row = Omit<RuntimeKeyRow, 'id'> & {
  ord: number;
  id: string | null;
  epoch: number | null;
  state: HeldRow['state'] | null;
  changed_by: string | null;
  changed_at: Date | null;
  record_id: string | null;
  response_body: unknown;
};

const SQL = `
  SELECT * FROM ledger_claim_peek_store($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text)`;

function params(items: HeldClaimRequest[]): unknown[] {
  return [
    items.map((i) => i.prefix),
    items.map((i) => i.secretHash),
    items.map((i) => i.workflow),
    items.map((i) => i.claimKey),
    items.map((i) => i.idempotencyKey),
    items.map((i) => i.requestHash),
    RUNTIME_SCOPE_PREFIX,
  ];
}

function read(row: Row | undefined): HeldClaimRead {
  if (!row) return { keyRow: undefined, held: undefined, stored: null };
  const { id, name, secret_hash, workflows, revoked_at, last_used_at } = row;
  return {
    keyRow: id === null ? undefined : { id, name, secret_hash, workflows, revoked_at, last_used_at },
    held:
      row.epoch === null
        ? undefined
        : {
            epoch: row.epoch,
            state: row.state!,
            changed_by: row.changed_by!,
            changed_at: row.changed_at!,
          },
    stored: row.record_id === null ? null : { id: row.record_id, body: row.response_body },
  };
}

async function runBatch(run: (values: unknown[]) => Promise<Row[]>, items: HeldClaimRequest[]) {
  const rows: (Row | undefined)[] = items.map(() => undefined);
  for (const row of await run(params(items))) rows[row.ord - 1] = row;
  return rows.map(read);
}

const batchers = new WeakMap<pg.Pool, GroupCommit<HeldClaimRequest, HeldClaimRead>>();

function batcher(pool: pg.Pool): GroupCommit<HeldClaimRequest, HeldClaimRead> {
  let group = batchers.get(pool);
  if (!group) {
    const run = async (values: unknown[]) =>
      (await pool.query<Row>({ name: 'ledger_claim_peek_store', text: SQL, values })).rows;
    group = new GroupCommit<HeldClaimRequest, HeldClaimRead>({
      // Every claim with an Idempotency-Key sends this statement first, and for a claim that may win it
      // is a read that waits for no flush: a free connection takes it at once. Measured against a
      // quarter of the pool (as for the records' inserts): the replay was within the noise of the
      // machine, while the send lost a tenth, its claims queueing behind each other.
      maxInFlight: pool.options.max ?? 10,
      maxBatch: 128,
      minBatch: 4,
      runOne: async (item) => (await runBatch(run, [item]))[0]!,
      runBatch: (items) => runBatch(run, items),
    });
    batchers.set(pool, group);
  }
  return group;
}

/** Reads the key and the claim's held row, and stores the record when it may; resolves once committed. */
export async function readHeldClaim(db: Db, item: HeldClaimRequest): Promise<HeldClaimRead> {
  const pool = sqlPool(db);
  if (!pool) return (await runBatch((values) => sqlRows<Row>(db, SQL, values, 'ledger_claim_peek_store'), [item]))[0]!;
  return batcher(pool).submit(item);
}
