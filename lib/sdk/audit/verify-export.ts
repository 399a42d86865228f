// Verifies a JSON Lines audit export with no database (A2, A5): every entry's hash is recomputed
// from the row (lib/sdk/audit/canonical.ts), every link within a chain is checked (seq + 1, prev_hash =
// the hash before), a chain that starts at seq 1 must start from the genesis hash, an export neither
// filtered nor scoped must hold every chain from seq 1, and the export's closing line (its seq range
// per chain) must agree with the entries it holds. Lines are fed one at a time, so a file of any size
// streams through. Imports only Node built-ins and its siblings, so the SDK package can ship it.
// docs/AUDIT.md describes the algorithm.
import { entryHash, GENESIS_HASH, type ExportedEntry } from './canonical.ts';
import { checkCheckpoints, type ChainLink, type CheckpointInput, type ExportedChains } from './checkpoint-verify.ts';
import { publicKeysById, type PublicKeys } from './checkpoint-signature.ts';

/** The closing line of an export: what it holds, so a partial export says which seq range it is. */
export interface ExportSummary {
  export: {
    format: 'effect-ledger-audit';
    version: 2;
    /** True when a filter applied: chains may be cut at either end. */
    filtered: boolean;
    /** True when the export holds only the workflows of a person scoped to some (Z1): a chain shared
     *  with other workflows may start after seq 1. When both this and `filtered` are false, every
     *  chain must start at seq 1. Absent in exports made before it was added; those are read as before
     *  (a chain may start after seq 1). */
    scoped?: boolean;
    entries: number;
    /** Per chain: the lowest and highest seq exported and how many entries. */
    chains: Record<string, { first_seq: number; last_seq: number; entries: number }>;
  };
}

export interface BrokenEntry {
  line: number;
  id: string | null;
  chain: string | null;
  seq: number | null;
  problem: string;
}

export type ExportVerification =
  | {
      ok: true;
      entries: number;
      chains: number;
      /** Chains whose first exported entry is not seq 1: its prev_hash is the anchor, not checked. */
      partial: { chain: string; first_seq: number; last_seq: number }[];
      /** With checkpoints: how many checkpointed (chain, seq) the export holds and agree. */
      checkpointsChecked?: number;
    }
  | ({ ok: false } & BrokenEntry);

/** What verification keeps of each entry once its hash is checked: its place and its links. */
interface Placed {
  line: number;
  entry: ChainLink;
}

/**
 * Verifies an export fed one line at a time (`add`, then `finish` once), keeping per entry only its line,
 * id, seq and hashes: the whole text never has to be in memory, so an export of any size can be
 * checked (a JavaScript string cannot hold more than about 512 MB). Given `checkpoints`, the export is
 * also checked against signed checkpoints (./checkpoint-verify.ts); their public keys are read at once
 * (a key that cannot be used throws here, before any line is read).
 */
export class ExportVerifier {
  private readonly chains: ExportedChains = new Map();
  private readonly problems: BrokenEntry[] = [];
  private readonly keys?: PublicKeys;
  private summary: ExportSummary | null = null;
  private entries = 0;
  private lines = 0;

  constructor(private readonly checkpoints?: CheckpointInput) {
    if (checkpoints) this.keys = publicKeysById(checkpoints.publicKeys);
  }

  /** The next line of the file, without its line break. */
  add(text: string): void {
    const line = ++this.lines;
    const raw = text.trim();
    if (!raw) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      this.problems.push({ line, id: null, chain: null, seq: null, problem: 'not a JSON line' });
      return;
    }
    if (value && typeof value === 'object' && 'export' in value) {
      this.summary = value as ExportSummary;
      return;
    }
    this.entries++;
    const entry = (value && typeof value === 'object' ? value : {}) as ExportedEntry;
    const at = { line, id: entry.id ?? null, chain: entry.chain ?? null, seq: entry.seq ?? null };
    if (typeof entry.chain !== 'string' || !Number.isInteger(entry.seq) || typeof entry.prev_hash !== 'string') {
      this.problems.push({ ...at, problem: 'not an audit entry (chain, seq or prev_hash missing)' });
      return;
    }
    if (entryHash(entry) !== entry.hash) this.problems.push({ ...at, problem: 'content does not match its hash' });
    let list = this.chains.get(entry.chain);
    if (!list) this.chains.set(entry.chain, (list = []));
    // The chain's name is kept once (the first entry's string), not once per entry.
    const chain = list[0]?.entry.chain ?? entry.chain;
    list.push({ line, entry: { id: entry.id, chain, seq: entry.seq, prev_hash: entry.prev_hash, hash: entry.hash } });
  }

  finish(): ExportVerification {
    const { chains, problems, summary, entries } = this;
    const endLine = this.lines;
    // Neither filtered nor scoped (a flag older exports do not carry): every chain must be whole.
    const whole = summary?.export.filtered === false && summary.export.scoped === false;
    const partial: { chain: string; first_seq: number; last_seq: number }[] = [];
    for (const [chain, list] of chains) {
      // File order is commit order by id, which within one chain need not be seq order: sort by seq.
      list.sort((a, b) => a.entry.seq - b.entry.seq);
      const first = list[0]!.entry;
      if (first.seq === 1 && first.prev_hash !== GENESIS_HASH)
        problems.push(brokenAt(list[0]!, 'the first entry of the chain does not start from the genesis hash'));
      if (first.seq !== 1 && whole)
        problems.push(
          brokenAt(
            list[0]!,
            `the chain starts at seq ${first.seq}: an export neither filtered nor scoped holds it from seq 1`,
          ),
        );
      else if (first.seq !== 1) partial.push({ chain, first_seq: first.seq, last_seq: list.at(-1)!.entry.seq });
      for (let k = 1; k < list.length; k++) {
        const before = list[k - 1]!.entry;
        const here = list[k]!;
        if (here.entry.seq === before.seq) problems.push(brokenAt(here, `seq ${before.seq} appears twice`));
        else if (here.entry.seq !== before.seq + 1 && !summary?.export.filtered)
          problems.push(brokenAt(here, `sequence gap before this entry (after seq ${before.seq})`));
        else if (here.entry.seq === before.seq + 1 && here.entry.prev_hash !== before.hash)
          problems.push(brokenAt(here, 'previous hash does not match'));
      }
      const stated = summary?.export.chains[chain];
      if (
        summary &&
        (!stated ||
          stated.first_seq !== first.seq ||
          stated.last_seq !== list.at(-1)!.entry.seq ||
          stated.entries !== list.length)
      )
        problems.push(brokenAt(list.at(-1)!, 'the export summary states another seq range for this chain'));
    }
    const atEnd = { line: endLine, id: null, chain: null, seq: null };
    if (!summary)
      problems.push({ ...atEnd, problem: 'no closing summary line: the export is truncated or not an audit export' });
    else if (summary.export.entries !== entries)
      problems.push({
        ...atEnd,
        problem: `the export summary states ${summary.export.entries} entries, the file holds ${entries}`,
      });
    const againstCheckpoints = this.checkpoints
      ? checkCheckpoints(chains, summary?.export.filtered ?? false, endLine, this.checkpoints, this.keys)
      : undefined;
    if (againstCheckpoints) problems.push(...againstCheckpoints.problems);
    if (problems.length > 0) {
      const firstBroken = problems.reduce((a, b) => (b.line < a.line ? b : a));
      return { ok: false, ...firstBroken };
    }
    return { ok: true, entries, chains: chains.size, partial, checkpointsChecked: againstCheckpoints?.checked };
  }
}

/** Verifies a whole export held as one string. */
export function verifyExport(text: string, checkpoints?: CheckpointInput): ExportVerification {
  const verifier = new ExportVerifier(checkpoints);
  for (const line of text.split('\n')) verifier.add(line);
  return verifier.finish();
}

/** Verifies an export read piece by piece (a file stream with utf8 encoding): lines are cut exactly as
 *  verifyExport cuts a string, so both give the same result, line numbers included. */
export async function verifyExportStream(
  chunks: AsyncIterable<string>,
  checkpoints?: CheckpointInput,
): Promise<ExportVerification> {
  const verifier = new ExportVerifier(checkpoints);
  for await (const line of exportLines(chunks)) verifier.add(line);
  return verifier.finish();
}

/** The lines of a text that arrives in pieces, as `text.split('\n')` would give them. */
export async function* exportLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    yield* parts;
  }
  yield rest;
}

const brokenAt = (p: Placed, problem: string): BrokenEntry => ({
  line: p.line,
  id: p.entry.id ?? null,
  chain: p.entry.chain,
  seq: p.entry.seq,
  problem,
});
