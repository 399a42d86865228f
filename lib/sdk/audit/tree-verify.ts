// Offline checks of the audit tree's evidence (docs/AUDIT.md): a signed head (the log's signature and a
// quorum of known witnesses), inclusion proofs of entries against it, and a consistency proof from an
// older signed head. The files are the API's answers as they were saved; nothing here touches the
// network or the database. `npm run audit:tree-verify` is this function with files as arguments.
import { auditLeafHash, verifyConsistency, verifyInclusion } from './merkle.ts';
import { mergeNotes, openTreeHead, parseVkey, type OpenedHead } from './signed-note.ts';

export interface InclusionEvidence {
  entry_id: string;
  entry_hash: string;
  leaf_index: number;
  tree_size: number;
  proof: string[];
}

export interface ConsistencyEvidence {
  from: number;
  to: number;
  proof: string[];
}

export interface TreeEvidence {
  /** Notes of one head: the log's, and witnesses' cosigned copies (merged). */
  heads: string[];
  /** Verifier keys (vkeys) of the log and of the witnesses trusted; `quorum` of them must have cosigned. */
  logKey: string;
  witnessKeys?: string[];
  quorum?: number;
  inclusions?: InclusionEvidence[];
  /** An older signed head (notes) and the consistency proof from it to the head. */
  since?: string[];
  consistency?: ConsistencyEvidence;
}

export type TreeVerification =
  { ok: true; head: OpenedHead; inclusions: number; consistentFrom: number | null } | { ok: false; problem: string };

const hashes = (proof: string[]) => proof.map((p) => Buffer.from(p, 'base64'));

export function verifyTreeEvidence(e: TreeEvidence): TreeVerification {
  try {
    const log = parseVkey(e.logKey);
    const witnesses = (e.witnessKeys ?? []).map(parseVkey);
    const trust = { log, witnesses, quorum: e.quorum ?? 0 };
    const head = openTreeHead(mergeNotes(e.heads), trust);
    for (const p of e.inclusions ?? []) {
      if (p.tree_size !== head.size)
        return {
          ok: false,
          problem: `the inclusion proof of entry ${p.entry_id} is against ${p.tree_size} leaves, the head has ${head.size}`,
        };
      if (!verifyInclusion(p.leaf_index, p.tree_size, auditLeafHash(p.entry_hash), hashes(p.proof), head.root))
        return {
          ok: false,
          problem: `entry ${p.entry_id} (leaf ${p.leaf_index}) is not in the signed tree: its inclusion proof does not verify`,
        };
    }
    let consistentFrom: number | null = null;
    if (e.since) {
      // The older head needs the log's signature only: it is what the auditor saw before.
      const old = openTreeHead(mergeNotes(e.since), { log });
      const c = e.consistency;
      if (!c || c.from !== old.size || c.to !== head.size)
        return { ok: false, problem: `a consistency proof from ${old.size} to ${head.size} leaves is required` };
      if (!verifyConsistency(old.size, head.size, old.root, head.root, hashes(c.proof)))
        return {
          ok: false,
          problem: `the head of ${head.size} leaves does not extend the older head of ${old.size}: the history was rewritten`,
        };
      consistentFrom = old.size;
    }
    return { ok: true, head, inclusions: e.inclusions?.length ?? 0, consistentFrom };
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
}
