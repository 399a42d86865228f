// The audit tree (docs/AUDIT.md, "One tree over the whole trail") at scale: a trail bulk-loaded to
// `size` entries and integrated into the tree; appends through appendAudit with the tree maintained
// (the enqueue trigger on, the sequencer running as the worker runs it) and without (the trigger
// off: the append path as it was before the tree), in alternating rounds; inclusion and consistency
// proofs generated from the database at `size` leaves and verified, and the same in memory over a
// simulated tree of `simulated` leaves; and a signed bundle of every entry exported and verified
// offline in full (goal: 1,000,000 entries in under 30 s).
import { createHash, generateKeyPairSync } from 'node:crypto';
import {
  copyFileSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { appendAudit } from '@/lib/audit/append.ts';
import { auditBundleLines } from '@/lib/audit/export-bundle.ts';
import { newestHead } from '@/lib/audit/tree/api.ts';
import { signTreeHead } from '@/lib/audit/tree/signer.ts';
import { consistencyAt, inclusionAt, integrateAll, integrateOnce, rootAt } from '@/lib/audit/tree/store.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { createDb } from '@/lib/db/client.ts';
import { keyIdOf } from '@/lib/sdk/audit/checkpoint-signature.ts';
import {
  consistencyProof,
  inclusionProof,
  merkleLeafHash,
  nodeHash,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type Hash,
} from '@/lib/sdk/audit/merkle.ts';
import { formatVkey, verifierFor } from '@/lib/sdk/audit/signed-note.ts';
import { ExportVerifier, exportLines } from '@/lib/sdk/audit/verify-export.ts';
import { loadParallel } from './audit.ts';
import { closedLoop, type LoadResult } from './harness.ts';

export const TREE_VERIFY_GOAL_SECONDS = 30;
export const TREE_APPEND_GOAL = 1.2;

interface ProofFigures {
  hashes: number;
  bytes: number;
  generateP50ms: number;
  generateP95ms: number;
  verifyP50ms: number;
  ok: boolean;
}

export interface TreeBench {
  size: number;
  loadSeconds: number;
  integrateSeconds: number;
  appends: { writers: number; rounds: { without: LoadResult; with: LoadResult }[] };
  proofs: { where: string; leaves: number; inclusion: ProofFigures; consistency: ProofFigures }[];
  bundle: {
    entries: number;
    megabytes: number;
    exportSeconds: number;
    verifySeconds: number;
    ok: boolean;
    problem?: string;
  };
}

const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor((q / 100) * sorted.length))]!;

/** Generation and verification of `n` proofs of each kind, at random places, timed one by one. */
async function proofFigures(
  leaves: number,
  n: number,
  gen: {
    inclusion(index: number): Promise<Hash[]> | Hash[];
    consistency(first: number): Promise<Hash[]> | Hash[];
    root(size: number): Promise<Hash> | Hash;
    leaf(index: number): Promise<Hash> | Hash;
  },
): Promise<{ inclusion: ProofFigures; consistency: ProofFigures }> {
  const root = await gen.root(leaves);
  const run = async (kind: 'inclusion' | 'consistency'): Promise<ProofFigures> => {
    const genMs: number[] = [];
    const verMs: number[] = [];
    let hashes = 0;
    let ok = true;
    for (let k = 0; k < n; k++) {
      const at = 1 + Math.floor(Math.random() * (leaves - 2));
      const expected = kind === 'inclusion' ? await gen.leaf(at) : await gen.root(at);
      const t0 = performance.now();
      const proof = kind === 'inclusion' ? await gen.inclusion(at) : await gen.consistency(at);
      const t1 = performance.now();
      ok &&=
        kind === 'inclusion'
          ? verifyInclusion(at, leaves, expected, proof, root)
          : verifyConsistency(at, leaves, expected, root, proof);
      verMs.push(performance.now() - t1);
      genMs.push(t1 - t0);
      hashes = Math.max(hashes, proof.length);
    }
    genMs.sort((a, b) => a - b);
    verMs.sort((a, b) => a - b);
    return {
      hashes,
      bytes: hashes * 32,
      generateP50ms: p(genMs, 50),
      generateP95ms: p(genMs, 95),
      verifyP50ms: p(verMs, 50),
      ok,
    };
  };
  return { inclusion: await run('inclusion'), consistency: await run('consistency') };
}

/** A real RFC 9162 tree over a repeating leaf list (leaf i is SHA-256 of i mod 1024): every complete
 *  subtree of 1024 leaves or more at one level has one hash, so a tree of any size costs nothing to
 *  build, while its proofs have the length and the verification cost of any tree of that size. */
function simulatedTree() {
  const leaf = (i: number) =>
    merkleLeafHash(
      createHash('sha256')
        .update(String(i % 1024))
        .digest(),
    );
  const memo = new Map<string, Hash>();
  const perfect = (level: number, index: number): Hash => {
    const key = level >= 10 ? `${level}` : `${level}:${index % 2 ** (10 - level)}`;
    let h = memo.get(key);
    if (!h) {
      h = level === 0 ? leaf(index) : nodeHash(perfect(level - 1, 2 * index), perfect(level - 1, 2 * index + 1));
      memo.set(key, h);
    }
    return h;
  };
  return { perfect, leaf };
}

export async function benchTree(opts: {
  ownerUrl: string;
  appUrl: string;
  size: number;
  appends: number;
  writers: number;
  simulated: number;
  proofs?: number;
  /** Append rounds of each kind (alternating): the machine's noise is shared out between them. */
  rounds?: number;
  /** A directory to keep the exported bundle in (bundle.jsonl, log.vkey), to profile its verification. */
  keepBundle?: string;
}): Promise<TreeBench> {
  const owner = new pg.Client({ connectionString: opts.ownerUrl });
  await owner.connect();
  const db = createDb(opts.appUrl, opts.writers + 2);
  const signerDb = createDb(opts.ownerUrl, 2);
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-tree-'));
  try {
    let t0 = performance.now();
    console.log(`[bench] tree: loading ${opts.size} entries`);
    await loadParallel(opts.ownerUrl, 'tree', opts.size, 2);
    // The bulk load bypasses triggers; its entries join the tree as a backlog the sequencer takes.
    await owner.query('INSERT INTO audit_tree_pending SELECT id FROM audit_entry ON CONFLICT DO NOTHING');
    const loadSeconds = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const size = await integrateAll(db);
    const integrateSeconds = (performance.now() - t0) / 1000;
    console.log(`[bench] tree: integrated ${size} leaves in ${integrateSeconds.toFixed(1)} s`);

    // Appends, alternating: the enqueue trigger off (no tree), then on with the sequencer running.
    const actor = { kind: 'runtime' as const, id: 'bench-tree', label: 'bench tree writer', workflows: ['*'] };
    const append = (i: number) =>
      appendAudit(db, {
        chain: `tree-bench:${i % 1000}`,
        actor,
        action: 'effect.report',
        subjectType: 'effect',
        subjectId: `k${i % 1000}`,
        detail: { i },
      });
    await closedLoop(Math.min(500, opts.appends), opts.writers, append);
    const rounds: TreeBench['appends']['rounds'] = [];
    for (let r = 0; r < (opts.rounds ?? 4); r++) {
      await owner.query('ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_tree_enqueue');
      const without = await closedLoop(opts.appends, opts.writers, append);
      await owner.query('ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_tree_enqueue');
      let sequencing = true;
      const sequencer = (async () => {
        while (sequencing) {
          await integrateOnce(db);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      })();
      const withTree = await closedLoop(opts.appends, opts.writers, append);
      sequencing = false;
      await sequencer;
      rounds.push({ without, with: withTree });
      console.log(
        `[bench] tree: appends/s without ${without.perSecond.toFixed(0)}, with ${withTree.perSecond.toFixed(0)}`,
      );
    }
    // The rounds without the trigger left their entries out of the tree (the trail has none such
    // otherwise): they join now, as a backlog, so the tree again holds every entry.
    await owner.query(
      `INSERT INTO audit_tree_pending SELECT e.id FROM audit_entry e
        WHERE NOT EXISTS (SELECT 1 FROM audit_tree_leaf l WHERE l.entry_id = e.id) ON CONFLICT DO NOTHING`,
    );
    const leaves = await integrateAll(db);

    const n = opts.proofs ?? 50;
    const proofs: TreeBench['proofs'] = [];
    const stored = await proofFigures(leaves, n, {
      inclusion: (i) => inclusionAt(db, i, leaves),
      consistency: (m) => consistencyAt(db, m, leaves),
      root: (s) => rootAt(db, s),
      leaf: async (i) => {
        const { rows } = await owner.query<{ hash: Buffer }>('SELECT hash FROM audit_tree_leaf WHERE idx = $1', [i]);
        return rows[0]!.hash;
      },
    });
    proofs.push({ where: 'database (stored subtrees, one query per proof)', leaves, ...stored });
    if (opts.simulated > 0) {
      const sim = simulatedTree();
      const figures = await proofFigures(opts.simulated, n, {
        inclusion: (i) => inclusionProof(i, opts.simulated, sim.perfect),
        consistency: (m) => consistencyProof(m, opts.simulated, sim.perfect),
        root: (s) => treeRoot(s, sim.perfect),
        leaf: (i) => sim.leaf(i),
      });
      proofs.push({ where: 'in memory (simulated leaves)', leaves: opts.simulated, ...figures });
    }

    // A signed bundle of every entry, exported to a file and verified offline in full.
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const origin = 'bench/audit';
    await signTreeHead(signerDb, { privateKey, origin, statePath: path.join(dir, 'state') });
    const head = { ...(await newestHead(db, { origin, privateKey })), origin };
    const file = path.join(dir, 'bundle.jsonl');
    t0 = performance.now();
    const out = createWriteStream(file);
    for await (const chunk of auditBundleLines(db, {}, EVERY_WORKFLOW, head, {
      privateKey,
      keyId: keyIdOf(privateKey),
    }))
      if (!out.write(chunk)) await once(out, 'drain');
    out.end();
    await once(out, 'finish');
    const exportSeconds = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const verifier = new ExportVerifier(undefined, { logKey: formatVkey(verifierFor(origin, publicKey)) });
    for await (const line of exportLines(createReadStream(file))) verifier.add(line);
    const result = verifier.finish();
    const verifySeconds = (performance.now() - t0) / 1000;
    if (opts.keepBundle) {
      copyFileSync(file, path.join(opts.keepBundle, 'bundle.jsonl'));
      writeFileSync(path.join(opts.keepBundle, 'log.vkey'), formatVkey(verifierFor(origin, publicKey)));
    }
    console.log(`[bench] tree: bundle of ${head.size} entries verified in ${verifySeconds.toFixed(1)} s`);
    return {
      size: opts.size,
      loadSeconds,
      integrateSeconds,
      appends: { writers: opts.writers, rounds },
      proofs,
      bundle: {
        entries: result.ok ? result.entries : head.size,
        megabytes: statSync(file).size / 2 ** 20,
        exportSeconds,
        verifySeconds,
        ok: result.ok,
        ...(!result.ok && { problem: `line ${result.line}: ${result.problem}` }),
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.$disconnect();
    await signerDb.$disconnect();
    await owner.end();
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function treeLines(b: TreeBench): string[] {
  const w = b.appends.rounds.map((r) => r.without.perSecond);
  const t = b.appends.rounds.map((r) => r.with.perSecond);
  const median = (xs: number[]) => {
    const s = [...xs].sort((x, y) => x - y);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  // Cost per entry is the inverse of the rate: with / without of the cost is without / with of the rate.
  const cost = median(w) / median(t);
  const row = (x: TreeBench['proofs'][number], kind: 'inclusion' | 'consistency') => {
    const f = x[kind];
    return `| ${x.where} | ${fmt(x.leaves)} | ${kind} | ${f.hashes} | ${fmt(f.bytes)} | ${fmt(f.generateP50ms, 3)} | ${fmt(f.generateP95ms, 3)} | ${fmt(f.verifyP50ms, 3)} | ${f.ok ? 'yes' : '**no**'} |`;
  };
  const v = b.bundle;
  return [
    `A trail of ${fmt(b.size)} entries bulk-loaded (${fmt(b.loadSeconds, 1)} s) and integrated into the tree by the sequencer as one backlog: ${fmt(b.integrateSeconds, 1)} s, ${fmt(b.size / b.integrateSeconds)} leaves/s.`,
    '',
    `Appends through \`appendAudit\` (app role, one transaction each, ${b.appends.writers} writers) on that trail, in alternating rounds: **without** the tree (its enqueue trigger disabled: the append path before the tree) and **with** it (the trigger on, the sequencer integrating every second meanwhile, on the same server). Goal: the cost per entry with the tree at most ${TREE_APPEND_GOAL} times the cost without.`,
    '',
    '| round | without: appends/s | p50 ms | p99 ms | with: appends/s | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...b.appends.rounds.map(
      (r, i) =>
        `| ${i + 1} | ${fmt(r.without.perSecond)} | ${fmt(r.without.p50ms, 2)} | ${fmt(r.without.p99ms, 2)} | ${fmt(r.with.perSecond)} | ${fmt(r.with.p50ms, 2)} | ${fmt(r.with.p99ms, 2)} |`,
    ),
    '',
    `Cost per entry with the tree / without (medians of the rounds): **${fmt(cost, 2)}** (${cost <= TREE_APPEND_GOAL ? 'goal met' : '**goal not met**'}). The rounds of one kind differ from each other by as much as the kinds differ: on a machine whose two cores are shared with other work, read this figure with the spread of its rounds. What the tree adds on the append path is one row per inserting statement (the enqueue trigger's insert into \`audit_tree_pending\`); the sequencer's work runs beside it, off the path.`,
    '',
    'Proofs: 50 of each kind at random places, generated and then verified (`verifyInclusion`, `verifyConsistency`). From the database, each proof reads its O(log n) stored subtrees in one query. In memory, the simulated tree is a real RFC 9162 tree over a repeating leaf list (leaf i is the hash of i mod 1024), so its proofs have the length and the checking cost of any tree of that size.',
    '',
    '| where | leaves | proof | hashes (max) | bytes | generate p50 ms | p95 ms | verify p50 ms | all verify |',
    '|---|---:|---|---:|---:|---:|---:|---:|---|',
    ...b.proofs.flatMap((x) => [row(x, 'inclusion'), row(x, 'consistency')]),
    '',
    `A signed bundle of every entry (${fmt(v.entries)} entries, ${fmt(v.megabytes)} MiB) exported from the database in ${fmt(v.exportSeconds, 1)} s and verified offline in full in **${fmt(v.verifySeconds, 1)} s** (every entry's hash and link, the leaves rebuilding the signed root, the signed statement; \`ExportVerifier\` reading the file line by line): ${v.ok ? (v.verifySeconds < TREE_VERIFY_GOAL_SECONDS ? `goal (under ${TREE_VERIFY_GOAL_SECONDS} s) met` : `**goal (under ${TREE_VERIFY_GOAL_SECONDS} s) not met**`) : `**the bundle did not verify**: ${v.problem}`}.`,
  ];
}
