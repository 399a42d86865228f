// The audit export as a signed bundle (docs/AUDIT.md, "The export as a signed bundle"): version 3 of
// the JSON Lines export. Its first line names what it covers (every entry, a filter, a person's scope)
// and carries the signed tree head it was cut at; every entry carries its leaf index in that tree
// and, unless the bundle covers every entry, its RFC 9162 inclusion proof; the closing line carries
// the RFC 9162 root of the exported entries in file order and the ledger's Ed25519 signature over one
// statement of all of it. So an entry removed, added or moved, a coverage changed, or a summary flag
// flipped no longer verifies: the statement is signed, and a bundle of every entry must rebuild the
// signed tree's root itself. Node's `crypto` only, so the SDK package ships it.
import { sign, verify, type KeyObject } from 'node:crypto';
import { jcs, type ExportedEntry } from './canonical.ts';
import { keyIdOf } from './checkpoint-signature.ts';
import { auditLeafHashUnchecked, TreeBuilder, verifyInclusion } from './merkle.ts';
import { mergeNotes, openTreeHead, parseVkey, type OpenedHead } from './signed-note.ts';

export const BUNDLE_VERSION = 3;

/** What a bundle holds: null for both is every entry of the trail up to the head's size. */
export interface BundleCoverage {
  /** The console filter that applied (its fields as the audit page names them), or null. */
  filter: Record<string, string> | null;
  /** The workflows of a person scoped to some of them (their export holds only those), or null. */
  workflows: string[] | null;
}

/** The first line of a bundle. */
export interface BundleHeader {
  bundle: { format: 'effect-ledger-audit-bundle'; version: 3; coverage: BundleCoverage; head: string };
}

/** What each entry line of a bundle adds to the entry (not part of what the entry's hash covers). */
export interface BundleLeaf {
  index: number;
  /** base64 hashes of the inclusion proof against the head; empty when the bundle covers every entry. */
  proof: string[];
}

/** The signed members of a bundle's closing line (beside the version 2 summary's). */
export interface BundleSeal {
  /** base64 RFC 9162 root over the exported entries' leaves, in file order. */
  entries_root: string;
  signed_at: string;
  key_id: string;
  /** base64 Ed25519 signature of bundleStatement(). */
  signature: string;
}

export interface BundleStatementInput {
  coverage: BundleCoverage;
  origin: string;
  treeSize: number;
  treeRoot: string;
  entries: number;
  entriesRoot: string;
  signedAt: string;
  keyId: string;
}

/** The signed bytes: RFC 8785 text tagged with its own format name, so this signature can never pass
 *  for a checkpoint's (format effect-ledger-checkpoint) or a tree head's (a signed note). */
export function bundleStatement(s: BundleStatementInput): string {
  return jcs({
    format: 'effect-ledger-export',
    version: BUNDLE_VERSION,
    coverage: s.coverage,
    origin: s.origin,
    tree_size: s.treeSize,
    tree_root: s.treeRoot,
    entries: s.entries,
    entries_root: s.entriesRoot,
    signed_at: s.signedAt,
    key_id: s.keyId,
  });
}

export function signBundleStatement(s: BundleStatementInput, privateKey: KeyObject): string {
  return sign(null, Buffer.from(bundleStatement(s), 'utf8'), privateKey).toString('base64');
}

export const coversEverything = (c: BundleCoverage) => c.filter === null && c.workflows === null;

/** Who the verifier trusts for a bundle: the log's verifier key and, optionally, a witness quorum. */
export interface BundleTrust {
  logKey: string;
  witnessKeys?: string[];
  quorum?: number;
}

/**
 * The filter field an entry visibly does not match, or null. Checked: action (its text anywhere in the
 * action's name, ASCII case ignored), outcome, run (the whole run id or its leading digits). The actor,
 * target and time fields need what an entry does not carry (the database's case folding of names, an
 * effect's recipients, how the console read a typed time): the ledger's signature vouches for those.
 */
export function filterMismatch(filter: Record<string, string>, e: ExportedEntry): string | null {
  const { action, outcome, run } = filter;
  if (action !== undefined && /^[\x00-\x7f]*$/.test(action) && !e.action.toLowerCase().includes(action.toLowerCase()))
    return 'action';
  if ((outcome === 'ok' || outcome === 'refused') && e.outcome !== outcome) return 'outcome';
  if (run !== undefined && !(e.run_id ?? '').replace(/-/g, '').startsWith(run.trim().toLowerCase().replace(/-/g, '')))
    return 'run';
  return null;
}

const isStringRecord = (v: unknown) =>
  !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

export function headerShapeProblem(v: Record<string, unknown>): string | null {
  const b = v.bundle as Record<string, unknown> | null;
  const c = (b?.coverage ?? null) as Record<string, unknown> | null;
  const shaped =
    Object.keys(v).length === 1 &&
    !!b &&
    typeof b === 'object' &&
    b.format === 'effect-ledger-audit-bundle' &&
    b.version === BUNDLE_VERSION &&
    typeof b.head === 'string' &&
    !!c &&
    Object.keys(c).length === 2 &&
    (c.filter === null || isStringRecord(c.filter)) &&
    (c.workflows === null || (Array.isArray(c.workflows) && c.workflows.every((w) => typeof w === 'string')));
  return shaped ? null : 'the bundle header is not shaped as an effect-ledger-audit-bundle header (docs/AUDIT.md)';
}

/**
 * The bundle half of verifying a version 3 export: the head (opened with the trusted keys), each
 * entry's leaf, and the signed closing statement. Problems are returned as text; the export verifier
 * places them at their line.
 */
export class BundleCheck {
  head: OpenedHead | null = null;
  coverage: BundleCoverage | null = null;
  private readonly exported = new TreeBuilder();
  private lastIndex = -1;
  private logKey: KeyObject | null = null;

  constructor(private readonly trust: BundleTrust | undefined) {}

  open(header: BundleHeader['bundle']): string | null {
    this.coverage = header.coverage;
    if (!this.trust) return 'a signed bundle is checked against the log key (--log-key): none was given';
    try {
      const log = parseVkey(this.trust.logKey);
      const witnesses = (this.trust.witnessKeys ?? []).map(parseVkey);
      this.head = openTreeHead(mergeNotes([header.head]), { log, witnesses, quorum: this.trust.quorum ?? 0 });
      this.logKey = log.publicKey;
      return null;
    } catch (error) {
      return `the bundle's tree head does not verify: ${(error as Error).message}`;
    }
  }

  entry(entry: ExportedEntry, leaf: unknown): string | null {
    const head = this.head;
    if (!head || !this.coverage) return 'an entry before a verified bundle header';
    const l = leaf as BundleLeaf | undefined;
    if (
      !l ||
      typeof l !== 'object' ||
      !Number.isSafeInteger(l.index) ||
      !Array.isArray(l.proof) ||
      !l.proof.every((p) => typeof p === 'string')
    )
      return 'the entry has no leaf (index and proof) as a bundle writes it';
    const hash = auditLeafHashUnchecked(entry.hash); // its shape (64 hex digits) was checked
    this.exported.add(hash);
    if (l.index <= this.lastIndex)
      return `leaf ${l.index} is not after leaf ${this.lastIndex}: entries are in leaf order`;
    if (l.index >= head.size) return `leaf ${l.index} is beyond the signed tree of ${head.size} leaves`;
    const previous = this.lastIndex;
    this.lastIndex = l.index;
    const wrong = this.coverage.filter && filterMismatch(this.coverage.filter, entry);
    if (wrong) return `the entry does not match the signed filter's ${wrong}`;
    if (coversEverything(this.coverage)) {
      // Every entry: the root rebuilt from the file (finish) proves each; none may be skipped.
      return l.index === previous + 1
        ? null
        : `leaves ${previous + 1} to ${l.index - 1} are missing from a bundle of every entry`;
    }
    const proof = l.proof.map((p) => Buffer.from(p, 'base64'));
    return verifyInclusion(l.index, head.size, hash, proof, head.root)
      ? null
      : `the entry is not leaf ${l.index} of the signed tree: its inclusion proof does not verify`;
  }

  describe(): { treeSize: number; witnesses: string[]; coverage: string } {
    const c = this.coverage!;
    const parts = [
      ...(c.filter ? [`the filter ${JSON.stringify(c.filter)}`] : []),
      ...(c.workflows ? [`the workflows ${c.workflows.join(', ')}`] : []),
    ];
    return {
      treeSize: this.head!.size,
      witnesses: this.head!.witnesses.map((w) => w.name),
      coverage: parts.length ? parts.join(' within ') : 'every entry',
    };
  }

  /** The closing line's signed statement, against what the file held. */
  finish(summary: { filtered: boolean; scoped?: boolean; entries: number } & Partial<BundleSeal>): string | null {
    const { head, coverage } = this;
    if (!head || !coverage || !this.logKey) return null; // already reported at the header
    const root = this.exported.root().toString('base64');
    if (coversEverything(coverage)) {
      if (this.exported.size !== head.size)
        return `the bundle covers every entry of the signed tree of ${head.size} leaves but holds ${this.exported.size}`;
      if (root !== head.root.toString('base64')) return "the bundle's entries do not rebuild the signed tree's root";
    }
    if (summary.scoped !== (coverage.workflows !== null))
      return `the summary says scoped: ${String(summary.scoped)}, the signed coverage says otherwise`;
    if (coverage.filter !== null && !summary.filtered)
      return 'the summary says filtered: false, the signed coverage names a filter';
    if (coversEverything(coverage) && summary.filtered)
      return 'the summary says filtered: true, the signed coverage is every entry';
    if (!summary.signature || !summary.key_id || !summary.signed_at || !summary.entries_root)
      return 'the bundle has no signed statement (entries_root, signed_at, key_id, signature)';
    if (summary.entries_root !== root)
      return "the summary's entries_root is not the root of the entries the file holds: an entry was removed, added or moved";
    if (summary.key_id !== keyIdOf(this.logKey)) return `the statement names key ${summary.key_id}, not the log's`;
    const text = bundleStatement({
      coverage,
      origin: head.origin,
      treeSize: head.size,
      treeRoot: head.root.toString('base64'),
      entries: summary.entries,
      entriesRoot: root,
      signedAt: summary.signed_at,
      keyId: summary.key_id,
    });
    const ok = verify(null, Buffer.from(text, 'utf8'), this.logKey, Buffer.from(summary.signature, 'base64'));
    return ok ? null : "the bundle's signed statement does not verify: its coverage, head or entries were changed";
  }
}
