// The audit tree in the database (docs/AUDIT.md, "One tree over the whole trail"): sequencing the
// committed entries into it, and reading its size, roots and proofs. Every root and proof is computed
// from the stored complete subtrees by the RFC 9162 functions of the SDK (lib/sdk/audit/merkle.ts), in
// two passes: the first only records which subtrees the computation names, one query fetches them
// (O(log n) rows), the second computes. The database never computes a proof of its own.
import type { DbOrTx } from '@/lib/db/client.ts';
import { consistencyProof, inclusionProof, treeRoot, type Hash, type PerfectSubtree } from '@/lib/sdk/audit/merkle.ts';

/** Leaves integrated per sequencer call: one transaction stays short, a backlog takes several calls. */
export const SEQUENCE_BATCH = 20_000;

/** Integrates the committed entries not yet in the tree (up to `max`), returning the new size. */
export async function integrateOnce(db: DbOrTx, max = SEQUENCE_BATCH): Promise<number> {
  const [row] = await db.$queryRaw<[{ size: bigint }]>`SELECT audit_tree_integrate(${max}::int) AS size`;
  return Number(row.size);
}

/** Integrates until nothing committed is left out (a backlog of many batches included). */
export async function integrateAll(db: DbOrTx, max = SEQUENCE_BATCH): Promise<number> {
  let size = await treeSize(db);
  for (;;) {
    const next = await integrateOnce(db, max);
    const grew = next - size;
    size = next;
    if (grew < max) return size;
  }
}

export async function treeSize(db: DbOrTx): Promise<number> {
  const [row] = await db.$queryRaw<[{ size: bigint }]>`SELECT coalesce(max(idx) + 1, 0) AS size FROM audit_tree_leaf`;
  return Number(row.size);
}

const ZERO = Buffer.alloc(32);

/** Runs `compute` over the stored complete subtrees it names: O(log n) rows in one query. */
async function withSubtrees<T>(db: DbOrTx, compute: (perfect: PerfectSubtree) => T): Promise<T> {
  const wanted = new Map<string, { level: number; index: number }>();
  compute((level, index) => {
    wanted.set(`${level}:${index}`, { level, index });
    return ZERO;
  });
  const all = [...wanted.values()];
  const leaves = all.filter((w) => w.level === 0).map((w) => w.index);
  const nodes = all.filter((w) => w.level > 0);
  const rows = await db.$queryRaw<{ level: number; idx: bigint; hash: Uint8Array }[]>`
    SELECT 0 AS level, l.idx, l.hash FROM audit_tree_leaf l WHERE l.idx = ANY (${leaves}::bigint[])
    UNION ALL
    SELECT n.level, n.idx, n.hash
      FROM unnest(${nodes.map((n) => n.level)}::smallint[], ${nodes.map((n) => n.index)}::bigint[]) AS w(level, idx)
      JOIN audit_tree_node n ON n.level = w.level AND n.idx = w.idx`;
  const found = new Map(rows.map((r) => [`${r.level}:${r.idx}`, Buffer.from(r.hash)]));
  return compute((level, index) => {
    const hash = found.get(`${level}:${index}`);
    if (!hash) throw new Error(`the audit tree lacks the complete subtree at level ${level}, index ${index}`);
    return hash;
  });
}

export class TreeRangeError extends Error {}

async function requireSize(db: DbOrTx, size: number): Promise<void> {
  if (!Number.isSafeInteger(size) || size < 0) throw new TreeRangeError(`a tree size is a whole number, not ${size}`);
  const current = await treeSize(db);
  if (size > current) throw new TreeRangeError(`the tree has ${current} leaves, not ${size}`);
}

/** The root of the tree of the first `size` leaves. */
export async function rootAt(db: DbOrTx, size: number): Promise<Hash> {
  await requireSize(db, size);
  return withSubtrees(db, (perfect) => treeRoot(size, perfect));
}

export async function inclusionAt(db: DbOrTx, index: number, size: number): Promise<Hash[]> {
  await requireSize(db, size);
  if (!Number.isSafeInteger(index) || index < 0 || index >= size)
    throw new TreeRangeError(`leaf ${index} is not in the tree of ${size} leaves`);
  return withSubtrees(db, (perfect) => inclusionProof(index, size, perfect));
}

export async function consistencyAt(db: DbOrTx, first: number, second: number): Promise<Hash[]> {
  await requireSize(db, second);
  if (!Number.isSafeInteger(first) || first < 0 || first > second)
    throw new TreeRangeError(`no consistency proof from ${first} leaves to ${second}`);
  return withSubtrees(db, (perfect) => consistencyProof(first, second, perfect));
}

export interface TreeLeaf {
  index: number;
  entryId: string;
  chain: string;
  seq: number;
  /** The entry's hash (hex): the leaf's bytes. */
  entryHash: string;
}

/** The leaf of an entry, or null when it is not (yet) in the tree. */
export async function leafOfEntry(db: DbOrTx, entryId: bigint): Promise<TreeLeaf | null> {
  const rows = await db.$queryRaw<{ idx: bigint; chain: string; seq: number; hash: string }[]>`
    SELECT l.idx, e.chain, e.seq, e.hash FROM audit_tree_leaf l JOIN audit_entry e ON e.id = l.entry_id
     WHERE l.entry_id = ${entryId}`;
  const r = rows[0];
  return r ? { index: Number(r.idx), entryId: String(entryId), chain: r.chain, seq: r.seq, entryHash: r.hash } : null;
}

export async function leafAt(db: DbOrTx, index: number): Promise<TreeLeaf | null> {
  const rows = await db.$queryRaw<{ entry_id: bigint; chain: string; seq: number; hash: string }[]>`
    SELECT l.entry_id, e.chain, e.seq, e.hash FROM audit_tree_leaf l JOIN audit_entry e ON e.id = l.entry_id
     WHERE l.idx = ${index}`;
  const r = rows[0];
  return r ? { index, entryId: String(r.entry_id), chain: r.chain, seq: r.seq, entryHash: r.hash } : null;
}
