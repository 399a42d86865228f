// Verifies a JSON Lines audit export with no database (A2, A5): every entry's hash is recomputed
// from the row (lib/sdk/audit/canonical.ts), every link within a chain is checked (seq + 1, prev_hash =
// the hash before), a chain that starts at seq 1 must start from the genesis hash, and the export's
// closing line (its seq range per chain) must agree with the entries it holds. Imports only Node
// built-ins and its sibling, so the SDK package can ship it. docs/AUDIT.md describes the algorithm.
import { entryHash, GENESIS_HASH, type ExportedEntry } from './canonical.ts';
import { checkCheckpoints, type CheckpointInput } from './checkpoint-verify.ts';

/** The closing line of an export: what it holds, so a partial export says which seq range it is. */
export interface ExportSummary {
  export: {
    format: 'effect-ledger-audit';
    version: 2;
    /** True when a filter applied: chains may be cut at either end. */
    filtered: boolean;
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

interface Placed {
  line: number;
  entry: ExportedEntry;
}

/** With `checkpoints`, the export is also checked against signed checkpoints (./checkpoint-verify.ts). */
export function verifyExport(text: string, checkpoints?: CheckpointInput): ExportVerification {
  const chains = new Map<string, Placed[]>();
  const problems: BrokenEntry[] = [];
  let summary: ExportSummary | null = null;
  let entries = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (!raw) continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push({ line, id: null, chain: null, seq: null, problem: 'not a JSON line' });
      continue;
    }
    if (value && typeof value === 'object' && 'export' in value) {
      summary = value as ExportSummary;
      continue;
    }
    const entry = value as ExportedEntry;
    entries++;
    const at = { line, id: entry.id ?? null, chain: entry.chain ?? null, seq: entry.seq ?? null };
    if (typeof entry.chain !== 'string' || !Number.isInteger(entry.seq) || typeof entry.prev_hash !== 'string') {
      problems.push({ ...at, problem: 'not an audit entry (chain, seq or prev_hash missing)' });
      continue;
    }
    if (entryHash(entry) !== entry.hash) problems.push({ ...at, problem: 'content does not match its hash' });
    const list = chains.get(entry.chain) ?? [];
    list.push({ line, entry });
    chains.set(entry.chain, list);
  }
  const partial: { chain: string; first_seq: number; last_seq: number }[] = [];
  for (const [chain, list] of chains) {
    // File order is commit order by id, which within one chain need not be seq order: sort by seq.
    list.sort((a, b) => a.entry.seq - b.entry.seq);
    const first = list[0]!.entry;
    if (first.seq === 1 && first.prev_hash !== GENESIS_HASH)
      problems.push(brokenAt(list[0]!, 'the first entry of the chain does not start from the genesis hash'));
    if (first.seq !== 1) partial.push({ chain, first_seq: first.seq, last_seq: list.at(-1)!.entry.seq });
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
  if (!summary)
    problems.push({
      line: lines.length,
      id: null,
      chain: null,
      seq: null,
      problem: 'no closing summary line: the export is truncated or not an audit export',
    });
  else if (summary.export.entries !== entries)
    problems.push({
      line: lines.length,
      id: null,
      chain: null,
      seq: null,
      problem: `the export summary states ${summary.export.entries} entries, the file holds ${entries}`,
    });
  const againstCheckpoints = checkpoints
    ? checkCheckpoints(chains, summary?.export.filtered ?? false, lines.length, checkpoints)
    : undefined;
  if (againstCheckpoints) problems.push(...againstCheckpoints.problems);
  if (problems.length > 0) {
    const firstBroken = problems.reduce((a, b) => (b.line < a.line ? b : a));
    return { ok: false, ...firstBroken };
  }
  return { ok: true, entries, chains: chains.size, partial, checkpointsChecked: againstCheckpoints?.checked };
}

const brokenAt = (p: Placed, problem: string): BrokenEntry => ({
  line: p.line,
  id: p.entry.id ?? null,
  chain: p.entry.chain,
  seq: p.entry.seq,
  problem,
});
