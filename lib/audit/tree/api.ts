// The audit tree's read API (docs/AUDIT.md): the newest signed head, an entry's inclusion proof against
// a tree size, a consistency proof between two sizes. Any runtime key may read them: they hold hashes
// and counts, never an entry's content. Nothing here is trusted by the reader: the head is a signed
// note, the proofs are checked against signed roots (npm run audit:tree-verify, the SDK).
import type { Db, DbOrTx } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import { invalid, notFound } from '@/lib/core/errors.ts';
import { openTreeHead, parseCheckpointBody, parseNote, mergeNotes, verifierFor } from '@/lib/sdk/audit/signed-note.ts';
import { treeSignerFrom } from './config.ts';
import { submitCosignature, witnessKeysFrom } from './cosignatures.ts';
import type { TreeSigner } from './signer.ts';
import { consistencyAt, inclusionAt, leafOfEntry, TreeRangeError } from './store.ts';
import { createPublicKey } from 'node:crypto';

const b64 = (h: Buffer) => h.toString('base64');

/** The newest stored head whose log signature verifies (when the key is known here), with every
 *  stored witness cosignature of that same head merged in. */
export async function newestHead(db: DbOrTx, signer: Pick<TreeSigner, 'origin' | 'privateKey'> | null) {
  const rows = await db.$queryRaw<{ note: string }[]>`
    SELECT note FROM audit_tree_head ORDER BY size DESC, id DESC LIMIT 20`;
  const log = signer && verifierFor(signer.origin, createPublicKey(signer.privateKey));
  const head = rows.find((r) => {
    try {
      if (log) openTreeHead(r.note, { log });
      else parseCheckpointBody(parseNote(r.note).body);
      return true;
    } catch {
      return false; // a row the signer did not write: skipped, readers would refuse it anyway
    }
  });
  if (!head) throw notFound('no signed head of the audit tree yet');
  const body = parseNote(head.note).body;
  const { size, root } = parseCheckpointBody(body);
  const cosigned = await db.$queryRaw<{ note: string }[]>`
    SELECT note FROM audit_tree_cosignature WHERE size = ${size} AND root = ${root} ORDER BY id`;
  const same = cosigned
    .map((c) => c.note)
    .filter((n) => {
      try {
        return parseNote(n).body === body;
      } catch {
        return false;
      }
    });
  return { note: mergeNotes([head.note, ...same]), size, root: b64(root) };
}

function asInput<T>(field: string, run: () => Promise<T>): Promise<T> {
  return run().catch((error: unknown) => {
    throw error instanceof TreeRangeError ? invalid(field, error.message) : error;
  });
}

export async function entryInclusion(db: DbOrTx, size: number, entryId: number) {
  const leaf = await leafOfEntry(db, BigInt(entryId));
  if (!leaf) throw notFound(`audit entry ${entryId} does not exist or is not in the tree yet`);
  if (leaf.index >= size)
    throw invalid(
      'size',
      `entry ${entryId} is leaf ${leaf.index}: it is in trees of ${leaf.index + 1} leaves and more`,
    );
  const proof = await asInput('size', () => inclusionAt(db, leaf.index, size));
  return {
    entry_id: leaf.entryId,
    chain: leaf.chain,
    seq: leaf.seq,
    entry_hash: leaf.entryHash,
    leaf_index: leaf.index,
    tree_size: size,
    proof: proof.map(b64),
  };
}

export async function treeConsistency(db: DbOrTx, from: number, to: number) {
  if (from > to) throw invalid('from', `from (${from}) is larger than to (${to})`);
  const proof = await asInput('to', () => consistencyAt(db, from, to));
  return { from, to, proof: proof.map(b64) };
}

/** A witness's cosignature, checked against the configured log key and witness keys (./cosignatures.ts). */
export async function submitConfiguredCosignature(
  db: Db,
  note: string,
  actor: Extract<Actor, { kind: 'runtime' }>,
  request: RequestMeta,
) {
  const e = env();
  const signer = treeSignerFrom(e);
  if ('missing' in signer) throw notFound(`this ledger signs no tree heads: ${signer.missing}`);
  const log = verifierFor(signer.origin, createPublicKey(signer.privateKey));
  return submitCosignature(db, { note, log, witnesses: witnessKeysFrom(e.AUDIT_WITNESS_KEYS), actor, request });
}
