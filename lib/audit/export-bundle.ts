// The JSON Lines audit export as a signed bundle (docs/AUDIT.md, "The export as a signed bundle";
// lib/sdk/audit/bundle.ts is the format and its verification). The export is cut at the newest signed
// tree head: it holds the entries that are leaves of that tree and match the filter and the viewer's
// scope, in leaf order, each with its leaf index and, unless it holds every entry, its inclusion proof.
// The closing line signs one statement of the coverage, the head and the root of the exported leaves
// with AUDIT_SIGNING_KEY. Entries newer than the head are in the next bundle, once a head covers them.
//
// Every batch is read in one REPEATABLE READ READ ONLY transaction on one connection, as the
// unsigned export is (lib/read-models/audit-export.ts says why), proofs included: they are computed
// from the subtrees stored in the same snapshot, a batch's O(k log n) subtrees in one query.
import type { PoolClient } from 'pg';
import type { WorkflowScope } from '@/lib/auth/grants.ts';
import { Prisma, sqlPool, type Db } from '@/lib/db/client.ts';
import { exportSummary, isFiltered } from '@/lib/read-models/audit-export.ts';
import { whereOf, type AuditFilter } from '@/lib/read-models/audit.ts';
import type { ExportedEntry } from '@/lib/sdk/audit/canonical.ts';
import {
  coversEverything,
  signBundleStatement,
  type BundleCoverage,
  type BundleHeader,
  type BundleLeaf,
} from '@/lib/sdk/audit/bundle.ts';
import { auditLeafHash, inclusionProof, TreeBuilder, type Hash } from '@/lib/sdk/audit/merkle.ts';
import type { ExportSummary } from '@/lib/sdk/audit/verify-export.ts';
import type { CheckpointKey } from './checkpoint.ts';

const BATCH = 1000;
const ZERO = Buffer.alloc(32);

/** The head a bundle is cut at: its note (with the witnesses' cosignatures) and its size and origin. */
export interface BundleHead {
  note: string;
  size: number;
  root: string;
  origin: string;
}

export function coverageOf(f: AuditFilter, scope: WorkflowScope): BundleCoverage {
  const given = Object.entries(f).filter(([, v]) => v !== undefined && v !== '') as [string, string][];
  return {
    filter: isFiltered(f) ? Object.fromEntries(given) : null,
    workflows: scope.all ? null : [...scope.workflows].sort(),
  };
}

/** The inclusion proofs of `indices` in the tree of `size` leaves, from one query of stored subtrees. */
async function proofsOf(client: PoolClient, indices: number[], size: number): Promise<Hash[][]> {
  const wanted = new Map<string, { level: number; index: number }>();
  for (const i of indices)
    inclusionProof(i, size, (level, index) => (wanted.set(`${level}:${index}`, { level, index }), ZERO));
  const all = [...wanted.values()];
  const nodes = all.filter((w) => w.level > 0);
  const { rows } = await client.query<{ level: number; idx: string; hash: Buffer }>(
    `SELECT 0 AS level, l.idx::text AS idx, l.hash FROM audit_tree_leaf l WHERE l.idx = ANY ($1::bigint[])
     UNION ALL
     SELECT n.level, n.idx::text, n.hash FROM unnest($2::smallint[], $3::bigint[]) AS w(level, idx)
       JOIN audit_tree_node n ON n.level = w.level AND n.idx = w.idx`,
    [all.filter((w) => w.level === 0).map((w) => w.index), nodes.map((n) => n.level), nodes.map((n) => n.index)],
  );
  const found = new Map(rows.map((r) => [`${r.level}:${r.idx}`, r.hash]));
  const lookup = (level: number, index: number) => {
    const hash = found.get(`${level}:${index}`);
    if (!hash) throw new Error(`the audit tree lacks the complete subtree at level ${level}, index ${index}`);
    return hash;
  };
  return indices.map((i) => inclusionProof(i, size, lookup));
}

/** The bundle's lines: header, entries (with leaves), the signed closing line. */
export async function* auditBundleLines(
  db: Db,
  f: AuditFilter,
  scope: WorkflowScope,
  head: BundleHead,
  key: CheckpointKey,
  options: { batch?: number } = {},
): AsyncGenerator<string> {
  const coverage = coverageOf(f, scope);
  const header: BundleHeader = {
    bundle: { format: 'effect-ledger-audit-bundle', version: 3, coverage, head: head.note },
  };
  yield JSON.stringify(header) + '\n';
  const withProofs = !coversEverything(coverage);
  const summary = exportSummary(isFiltered(f), scope);
  const exported = new TreeBuilder();
  const batch = options.batch ?? BATCH;
  const pool = sqlPool(db);
  if (!pool) throw new Error('auditBundleLines needs the root database client');
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => (lost = error);
  client.on('error', onError);
  let committed = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const where = whereOf(f, scope);
    let after = -1;
    for (;;) {
      const q = Prisma.sql`
        SELECT l.idx::text AS leaf_index, a.id::text AS id, a.canon_version::int AS version, a.chain, a.seq, a.prev_hash,
               a.hash, to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
               a.actor_kind::text AS actor_kind, a.actor_id, a.actor_label, a.actor_role, a.action,
               a.subject_type, a.subject_id, a.run_id::text AS run_id, a.before_state, a.after_state,
               a.reason, a.outcome, a.detail, a.ip, a.user_agent, a.request_id
        FROM audit_tree_leaf l JOIN audit_entry a ON a.id = l.entry_id
        WHERE l.idx > ${after}::bigint AND l.idx < ${head.size}::bigint AND ${where}
        ORDER BY l.idx LIMIT ${batch}::int`;
      const { rows } = await client.query<ExportedEntry & { leaf_index: string }>(q.text, q.values);
      const indices = rows.map((r) => Number(r.leaf_index));
      const proofs = withProofs ? await proofsOf(client, indices, head.size) : [];
      let out = '';
      rows.forEach(({ leaf_index, ...entry }, i) => {
        summary.add(entry);
        exported.add(auditLeafHash(entry.hash));
        const leaf: BundleLeaf = {
          index: Number(leaf_index),
          proof: (proofs[i] ?? []).map((h) => h.toString('base64')),
        };
        out += JSON.stringify({ ...entry, leaf }) + '\n';
      });
      if (out) yield out;
      if (rows.length < batch) break;
      after = indices.at(-1)!;
    }
    await client.query('COMMIT');
    committed = true;
  } finally {
    if (!committed) await client.query('ROLLBACK').catch((error: Error) => (lost ??= error));
    client.off('error', onError);
    client.release(lost);
  }
  const closing = JSON.parse(summary.line()) as ExportSummary;
  const seal = {
    entries_root: exported.root().toString('base64'),
    signed_at: new Date().toISOString(),
    key_id: key.keyId,
  };
  const statement = {
    coverage,
    origin: head.origin,
    treeSize: head.size,
    treeRoot: head.root,
    entries: closing.export.entries,
    entriesRoot: seal.entries_root,
    signedAt: seal.signed_at,
    keyId: seal.key_id,
  };
  closing.export = {
    ...closing.export,
    version: 3,
    ...seal,
    signature: signBundleStatement(statement, key.privateKey),
  };
  yield JSON.stringify(closing) + '\n';
}
