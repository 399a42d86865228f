// Verifies a JSON Lines audit export with no database (A2, A5): every entry's hash is recomputed
// from the row (lib/sdk/audit/canonical.ts), every link within a chain is checked (seq + 1, prev_hash =
// the hash before), a chain that starts at seq 1 must start from the genesis hash, an export neither
// filtered nor scoped must hold every chain from seq 1, and the export's closing line (its seq range
// per chain) must agree with the entries it holds. Lines are fed one at a time, so a file of any size
// streams through. Imports only Node built-ins and its siblings, so the SDK package can ship it.
// docs/AUDIT.md describes the algorithm.
import { GENESIS_HASH, shapedEntryHash, type ExportedEntry } from './canonical.ts';
import {
  checkCheckpoints,
  type CheckpointInput,
  type ExportedChains,
  type PlacedLink,
  type UncheckedCheckpoint,
} from './checkpoint-verify.ts';
import { publicKeysById, type PublicKeys } from './checkpoint-signature.ts';
import { BundleCheck, headerShapeProblem, type BundleHeader, type BundleSeal, type BundleTrust } from './bundle.ts';
import {
  entryShapeProblem,
  exportLines,
  lineText,
  parseStrict,
  summaryShapeProblem,
  type OversizedLine,
} from './export-input.ts';

export { exportLines, MAX_LINE_BYTES } from './export-input.ts';

/** The closing line of an export: what it holds, so a partial export says which seq range it is. */
export interface ExportSummary {
  export: Partial<BundleSeal> & {
    format: 'effect-ledger-audit';
    /** 2: an unsigned export; 3: a signed bundle (./bundle.ts), whose closing line adds its seal. */
    version: 2 | 3;
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
      /** With checkpoints and a filtered export: those beyond what it holds, not checked. */
      checkpointsUnchecked?: UncheckedCheckpoint[];
      /** A signed bundle: the head it was cut at, its witnesses, and what it covers (in words). */
      bundle?: { treeSize: number; witnesses: string[]; coverage: string };
    }
  | ({ ok: false } & BrokenEntry);

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
  /** The line of the summary, once read: nothing may follow it. */
  private summaryLine: number | null = null;
  /** The line of an empty line just read: allowed only as the last one (after the final line break). */
  private blankLine: number | null = null;

  /** The bundle being read (a version 3 export), from its header line on. */
  private bundle: BundleCheck | null = null;

  /** `trust`: the log's verifier key (and witnesses) a signed bundle is checked against. */
  constructor(
    private readonly checkpoints?: CheckpointInput,
    private readonly trust?: BundleTrust,
  ) {
    if (checkpoints) this.keys = publicKeysById(checkpoints.publicKeys);
  }

  /** The next line of the file, without its line break: text, or bytes (decoded strictly here). */
  add(input: string | Uint8Array | OversizedLine): void {
    const line = ++this.lines;
    const read = lineText(input);
    if ('problem' in read) return this.refuse(line, read.problem);
    // An empty line is only the end of the file's last line; one with anything after it is refused.
    if (this.blankLine !== null) this.refuse(this.blankLine, 'a blank line inside the export');
    this.blankLine = null;
    if (read.text === '') {
      this.blankLine = line;
      return;
    }
    if (this.summaryLine !== null)
      return this.refuse(
        line,
        `a line after the export summary (line ${this.summaryLine}): the summary is the last line`,
      );
    const parsed = parseStrict(read.text);
    if ('problem' in parsed) return this.refuse(line, parsed.problem);
    const value = parsed.value;
    if (value && typeof value === 'object' && 'bundle' in value) {
      if (line !== 1) return this.refuse(line, 'a bundle header not on the first line');
      const shape = headerShapeProblem(value as Record<string, unknown>);
      if (shape) return this.refuse(line, shape);
      this.bundle = new BundleCheck(this.trust);
      const problem = this.bundle.open((value as BundleHeader).bundle);
      return problem ? this.refuse(line, problem) : undefined;
    }
    if (value && typeof value === 'object' && 'export' in value) {
      this.summaryLine = line;
      const shape = summaryShapeProblem(value as Record<string, unknown>);
      if (shape) return this.refuse(line, shape);
      this.summary = value as ExportSummary;
      if ((this.summary.export.version === 3) !== (this.bundle !== null))
        return this.refuse(line, 'a version 3 summary closes a signed bundle, and only one');
      const sealed = this.bundle?.finish(this.summary.export);
      return sealed ? this.refuse(line, sealed) : undefined;
    }
    this.entries++;
    // A bundle's entry carries its leaf beside the fields its hash covers (read in place, not copied out).
    const shape = entryShapeProblem(value, this.bundle !== null);
    const entry = value as ExportedEntry & { leaf?: unknown };
    if (shape) return this.refuse(line, shape, entry);
    if (shapedEntryHash(entry) !== entry.hash) this.refuse(line, 'content does not match its hash', entry);
    const unproven = this.bundle?.entry(entry, entry.leaf);
    if (unproven) this.refuse(line, unproven, entry);
    let list = this.chains.get(entry.chain);
    if (!list) this.chains.set(entry.chain, (list = []));
    // The chain's name is kept once (the first entry's string), not once per entry.
    const chain = list.length ? list[0]!.chain : entry.chain;
    list.push({ line, id: entry.id, chain, seq: entry.seq, prev_hash: entry.prev_hash, hash: entry.hash });
  }

  /** A problem at `line`, placed at the entry read there when there is one (its members as far as they
   *  have the right type: a refused entry may lack them). */
  private refuse(line: number, problem: string, entry?: unknown): void {
    const e = (entry && typeof entry === 'object' ? entry : {}) as Record<string, unknown>;
    const text = (k: string) => (typeof e[k] === 'string' ? (e[k] as string) : null);
    const seq = Number.isSafeInteger(e.seq) ? (e.seq as number) : null;
    this.problems.push({ line, id: text('id'), chain: text('chain'), seq, problem });
  }

  finish(): ExportVerification {
    const { chains, problems, summary, entries } = this;
    const endLine = this.lines;
    // Neither filtered nor scoped (a flag older exports do not carry): every chain must be whole.
    const whole = summary?.export.filtered === false && summary.export.scoped === false;
    const partial: { chain: string; first_seq: number; last_seq: number }[] = [];
    for (const [chain, list] of chains) {
      // File order is commit order by id, which within one chain need not be seq order: sort by seq.
      list.sort((a, b) => a.seq - b.seq);
      const first = list[0]!;
      if (first.seq === 1 && first.prev_hash !== GENESIS_HASH)
        problems.push(brokenAt(list[0]!, 'the first entry of the chain does not start from the genesis hash'));
      if (first.seq !== 1 && whole)
        problems.push(
          brokenAt(
            list[0]!,
            `the chain starts at seq ${first.seq}: an export neither filtered nor scoped holds it from seq 1`,
          ),
        );
      else if (first.seq !== 1) partial.push({ chain, first_seq: first.seq, last_seq: list.at(-1)!.seq });
      for (let k = 1; k < list.length; k++) {
        const before = list[k - 1]!;
        const here = list[k]!;
        if (here.seq === before.seq) problems.push(brokenAt(here, `seq ${before.seq} appears twice`));
        else if (here.seq !== before.seq + 1 && !summary?.export.filtered)
          problems.push(brokenAt(here, `sequence gap before this entry (after seq ${before.seq})`));
        else if (here.seq === before.seq + 1 && here.prev_hash !== before.hash)
          problems.push(brokenAt(here, 'previous hash does not match'));
      }
      const stated = summary?.export.chains[chain];
      if (
        summary &&
        (!stated ||
          stated.first_seq !== first.seq ||
          stated.last_seq !== list.at(-1)!.seq ||
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
    return {
      ok: true,
      entries,
      chains: chains.size,
      partial,
      ...(this.bundle?.head && { bundle: this.bundle.describe() }),
      ...(againstCheckpoints && {
        checkpointsChecked: againstCheckpoints.checked,
        checkpointsUnchecked: againstCheckpoints.unchecked,
      }),
    };
  }
}

/** Verifies a whole export held as one string. */
export function verifyExport(text: string, checkpoints?: CheckpointInput, trust?: BundleTrust): ExportVerification {
  const verifier = new ExportVerifier(checkpoints, trust);
  for (const line of text.split('\n')) verifier.add(line);
  return verifier.finish();
}

/** Verifies an export read piece by piece: bytes (a file stream without an encoding, each line then
 *  decoded as strict UTF-8) or text. Lines are cut exactly as verifyExport cuts a string, so both give
 *  the same result, line numbers included. */
export async function verifyExportStream(
  chunks: AsyncIterable<string | Uint8Array>,
  checkpoints?: CheckpointInput,
  trust?: BundleTrust,
): Promise<ExportVerification> {
  const verifier = new ExportVerifier(checkpoints, trust);
  for await (const line of exportLines(chunks)) verifier.add(line);
  return verifier.finish();
}

const brokenAt = (p: PlacedLink, problem: string): BrokenEntry => ({
  line: p.line,
  id: p.id ?? null,
  chain: p.chain,
  seq: p.seq,
  problem,
});
