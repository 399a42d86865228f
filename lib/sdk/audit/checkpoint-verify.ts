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

/** What the checks keep of an exported entry: its place in its chain and its hashes. */
export type ChainLink = Pick<ExportedEntry, 'id' | 'chain' | 'seq' | 'prev_hash' | 'hash'>;

/** A chain's entries in the export, sorted by seq, each with its line. */
export type ExportedChains = Map<string, { line: number; entry: ChainLink }[]>;

export function checkCheckpoints(
  chains: ExportedChains,
  filtered: boolean,
  endLine: number,
  input: CheckpointInput,
  keys: PublicKeys = publicKeysById(input.publicKeys),
): { problems: CheckpointProblem[]; checked: number } {
  const problems: CheckpointProblem[] = [];
  if (input.file?.format !== 'effect-ledger-checkpoints' || !Array.isArray(input.file.checkpoints)) {
    const problem = 'the checkpoints file is not an effect-ledger-checkpoints file';
    return { problems: [{ line: endLine, id: null, chain: null, seq: null, problem }], checked: 0 };
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
      continue;
    }
    const last = list.at(-1)!;
    if (c.seq > last.entry.seq) {
      if (!filtered)
        problems.push({
          line: last.line,
          id: null,
          chain: c.chain,
          seq: c.seq,
          problem: `the chain was rewound: the export ends at seq ${last.entry.seq}, ${signed} holds seq ${c.seq}`,
        });
      continue;
    }
    const here = list.find((p) => p.entry.seq === c.seq);
    if (!here) continue; // outside the exported range, or left out by a filter
    checked++;
    if (here.entry.hash !== c.hash)
      problems.push({
        line: here.line,
        id: here.entry.id ?? null,
        chain: c.chain,
        seq: c.seq,
        problem: `the chain was rewritten: the hash at seq ${c.seq} is not the one ${signed} holds`,
      });
  }
  return { problems, checked };
}
