// Checks an audit export against signed checkpoints with no database (docs/AUDIT.md): every
// checkpoint's Ed25519 signature must verify with a given public key (chosen by key id); where the
// export holds a checkpointed (chain, seq), its hash there must be the signed one (else the chain was
// rewritten); and a complete export must reach every checkpointed seq (else the chain was rewound).
// Imports only Node built-ins and its siblings, like the rest of the offline verifier.
import type { ExportedEntry } from './canonical.ts';
import {
  checkpointSignatureValid,
  publicKeysById,
  type CheckpointsFile,
  type PublicKeys,
} from './checkpoint-signature.ts';

export interface CheckpointInput {
  file: CheckpointsFile;
  /** PEM public keys; several when keys were rotated (each checkpoint names its key id). */
  publicKeys: string[];
}

export interface CheckpointProblem {
  line: number;
  id: string | null;
  chain: string | null;
  seq: number | null;
  problem: string;
}

/** A checkpoint beyond what a filtered export holds: not checked, since a filter may have cut the
 *  chain's end there, and reported because nothing signs the summary's word that one did. */
export interface UncheckedCheckpoint {
  chain: string;
  seq: number;
  /** The last seq of the chain the export holds; null when it holds none of the chain. */
  exportEndsAt: number | null;
}

/** What the checks keep of an exported entry: its place in its chain and its hashes. */
export type ChainLink = Pick<ExportedEntry, 'id' | 'chain' | 'seq' | 'prev_hash' | 'hash'>;

/** A chain's entries in the export, sorted by seq, each with its line. */
export type ExportedChains = Map<string, PlacedLink[]>;
export type PlacedLink = ChainLink & { line: number };

export function checkCheckpoints(
  chains: ExportedChains,
  filtered: boolean,
  endLine: number,
  input: CheckpointInput,
  keys: PublicKeys = publicKeysById(input.publicKeys),
): { problems: CheckpointProblem[]; checked: number; unchecked: UncheckedCheckpoint[] } {
  const problems: CheckpointProblem[] = [];
  const unchecked: UncheckedCheckpoint[] = [];
  if (input.file?.format !== 'effect-ledger-checkpoints' || !Array.isArray(input.file.checkpoints)) {
    const problem = 'the checkpoints file is not an effect-ledger-checkpoints file';
    return { problems: [{ line: endLine, id: null, chain: null, seq: null, problem }], checked: 0, unchecked };
  }
  let checked = 0;
  for (const c of input.file.checkpoints) {
    const signed = `a checkpoint signed at ${c.signed_at} (key ${c.key_id})`;
    const atEnd = { line: endLine, id: null, chain: c.chain, seq: c.seq };
    const key = keys.get(c.key_id);
    if (!key) {
      problems.push({ ...atEnd, problem: `${signed} names a key id no given public key has` });
      continue;
    }
    if (!checkpointSignatureValid(c, key)) {
      problems.push({ ...atEnd, problem: `the signature of ${signed} does not verify` });
      continue;
    }
    const list = chains.get(c.chain);
    if (!list) {
      // A complete export holds every chain there is; a checkpointed chain missing was removed.
      if (!filtered)
        problems.push({
          ...atEnd,
          problem: `the chain was rewound: the export holds none of it, ${signed} holds seq ${c.seq}`,
        });
      else unchecked.push({ chain: c.chain, seq: c.seq, exportEndsAt: null });
      continue;
    }
    const last = list.at(-1)!;
    if (c.seq > last.seq) {
      if (!filtered)
        problems.push({
          line: last.line,
          id: null,
          chain: c.chain,
          seq: c.seq,
          problem: `the chain was rewound: the export ends at seq ${last.seq}, ${signed} holds seq ${c.seq}`,
        });
      // The summary that says so is not signed: what it leaves unchecked is reported, not hidden.
      else unchecked.push({ chain: c.chain, seq: c.seq, exportEndsAt: last.seq });
      continue;
    }
    const here = list.find((p) => p.seq === c.seq);
    // Left out by a filter: the entry after it, when exported, carries the hash at the checkpointed seq.
    const after = here ? undefined : list.find((p) => p.seq === c.seq + 1);
    if (after) {
      checked++;
      if (after.prev_hash !== c.hash)
        problems.push({
          line: after.line,
          id: after.id ?? null,
          chain: c.chain,
          seq: c.seq,
          problem: `the chain was rewritten: seq ${c.seq + 1} does not follow the hash at seq ${c.seq} that ${signed} holds`,
        });
    }
    if (!here) continue; // outside the exported range, or left out by a filter
    checked++;
    if (here.hash !== c.hash)
      problems.push({
        line: here.line,
        id: here.id ?? null,
        chain: c.chain,
        seq: c.seq,
        problem: `the chain was rewritten: the hash at seq ${c.seq} is not the one ${signed} holds`,
      });
  }
  return { problems, checked, unchecked };
}
