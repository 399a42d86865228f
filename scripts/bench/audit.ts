// Audit trail (A1, A2) at scale: appends per second under concurrent writers (many subjects versus
// one hot subject, whose chain head serializes its appends: the ceiling of one chain), verification
// of the whole trail at three sizes 10x apart (goal: 1,000,000 entries under 10 s), and the filtered
// queries the console runs, p50 / p95.
// Appends go through appendAudit on the app role (one transaction each, as a command's own entry
// would). The verification sizes are bulk-loaded as the owner with set-based SQL that computes the
// same chain hashes the trigger would (audit_hash over audit_canonical of the row); the verification
// then proves the load was a valid trail, so a loader that drifted from the trigger fails the bench.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { appendAudit } from '@/lib/audit/append.ts';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { createDb } from '@/lib/db/client.ts';
import { auditPage } from '@/lib/read-models/audit.ts';
import { closedLoop, timeRepeat, type LoadResult } from './harness.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

/** Entries per bulk-loaded chain: a run's or a busy key's chain is longer, most effect chains shorter. */
export const CHAIN_LENGTH = 10;
const ACTORS = 100;
const RUNS = 100;
const START = Date.UTC(2026, 0, 1);

export interface AuditBench {
  writers: number;
  manySubjects: LoadResult;
  hotSubject: LoadResult;
  /** The hot chain's length after the run: must equal the hot appends (no lost or doubled entries). */
  hotChainSeq: number;
  verify: { entries: number; chains: number; seconds: number; ok: boolean }[];
  /** Tamper check at the smallest size: one entry's content changed, verification names it. */
  tamper: { entryId: string; reportedEntryId: string | null; problem: string | null };
  queries: Record<string, { p50: number; p95: number }>;
}

/** Appends `entries` more entries in chains `bulk:<prefix>:<n>` of CHAIN_LENGTH, hash-chained, in
 *  one statement: a recursive query walks every chain one seq at a time, hashing each entry's
 *  canonical form (audit_canonical of the row as it will be stored) onto the previous hash. */
export async function bulkLoadAudit(owner: pg.Client, prefix: string, entries: number): Promise<void> {
  const chains = Math.ceil(entries / CHAIN_LENGTH);
  const columns = (
    await owner.query<{ name: string; type: string }>(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = 'audit_entry'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    )
  ).rows;
  const chain = `'bulk:${prefix}:' || n`;
  // Every column of an entry as an SQL expression of its chain number, seq and previous hash.
  const values = (seq: string, prev: string): Record<string, string> => ({
    chain,
    seq,
    prev_hash: prev,
    hash: `''`,
    at: `to_timestamp(${START / 1000}) + ((${seq} - 1) * ${chains} + n) * interval '1 millisecond'`,
    actor_kind: `'runtime'`,
    actor_id: `'rt-' || (n % ${ACTORS})`,
    actor_label: `'bench runtime ' || (n % ${ACTORS})`,
    action: `'effect.claim'`,
    subject_type: `'effect'`,
    subject_id: chain,
    run_id: `md5('run' || (n % ${RUNS}))::uuid`,
    before_state: `'pending'`,
    after_state: `'done'`,
    outcome: `'ok'`,
    request_id: `'req-' || n`,
    canon_version: '2',
  });
  const row = (seq: string, prev: string) => {
    const v = values(seq, prev);
    return `ROW(${columns.map((c) => `(${v[c.name] ?? 'NULL'})::${c.type}`).join(', ')})::audit_entry`;
  };
  const zeros = `repeat('0', 64)`;
  const stored = columns.filter((c) => c.name !== 'id' && c.name !== 'hash');
  const storedValues = values('seq', 'prev');
  await owner.query('BEGIN');
  try {
    // The chain trigger is bypassed for the load (superuser only); the hashes are computed here instead.
    await owner.query('SET LOCAL session_replication_role = replica');
    await owner.query("SET LOCAL work_mem = '256MB'");
    await owner.query(
      `INSERT INTO audit_entry (${stored.map((c) => c.name).join(', ')}, hash)
       WITH RECURSIVE r(n, seq, prev, hash) AS (
         SELECT n, 1, ${zeros}, audit_hash(${zeros}, audit_canonical(${row('1', zeros)})) FROM generate_series(1, ${chains}) n
         UNION ALL
         SELECT n, seq + 1, hash, audit_hash(hash, audit_canonical(${row('seq + 1', 'hash')})) FROM r WHERE seq < ${CHAIN_LENGTH}
       )
       SELECT ${stored.map((c) => `(${storedValues[c.name] ?? 'NULL'})::${c.type}`).join(', ')}, hash FROM r ORDER BY seq, n`,
    );
    await owner.query(
      `INSERT INTO audit_chain_head (chain, seq, hash) SELECT chain, seq, hash FROM audit_entry WHERE chain LIKE $1 AND seq = $2`,
      [`bulk:${prefix}:%`, CHAIN_LENGTH],
    );
    await owner.query('COMMIT');
  } catch (error) {
    await owner.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  await owner.query('VACUUM ANALYZE audit_entry');
  await owner.query('VACUUM ANALYZE audit_chain_head');
}

/** Loads `entries` over `parallel` owner connections at once (the hashing is CPU-bound per statement). */
export async function loadParallel(ownerUrl: string, prefix: string, entries: number, parallel: number): Promise<void> {
  const parts = Math.max(1, Math.min(parallel, Math.floor(entries / 10_000)));
  await Promise.all(
    Array.from({ length: parts }, async (_, k) => {
      const owner = new pg.Client({ connectionString: ownerUrl });
      await owner.connect();
      try {
        await bulkLoadAudit(owner, `${prefix}${k}`, Math.floor(entries / parts) + (k === 0 ? entries % parts : 0));
      } finally {
        await owner.end();
      }
    }),
  );
}

export async function benchAudit(opts: {
  ownerUrl: string;
  appUrl: string;
  /** Trail sizes (entries) for verification and the filtered queries, ascending. */
  sizes: number[];
  /** Appends per measurement (many subjects, then one hot subject). */
  appends: number;
  writers: number;
  repeat?: number;
}): Promise<AuditBench> {
  const repeat = opts.repeat ?? 20;
  const owner = new pg.Client({ connectionString: opts.ownerUrl });
  await owner.connect();
  const db = createDb(opts.appUrl, opts.writers);
  try {
    const verify: AuditBench['verify'] = [];
    const queries: AuditBench['queries'] = {};
    let tamper: AuditBench['tamper'] | undefined;
    let loaded = 0;
    for (const [step, size] of opts.sizes.entries()) {
      const existing = Number((await owner.query<{ n: string }>('SELECT count(*) AS n FROM audit_entry')).rows[0]!.n);
      const more = Math.max(0, size - existing);
      console.log(`[bench] audit: loading ${more} entries (trail of ${size})`);
      if (more > 0) await loadParallel(opts.ownerUrl, `s${step}p`, more, 2);
      loaded += more;
      const started = performance.now();
      const result = await verifyAuditTrail(db);
      const seconds = (performance.now() - started) / 1000;
      verify.push(
        result.ok
          ? { entries: result.entries, chains: result.chains, seconds, ok: true }
          : { entries: size, chains: 0, seconds, ok: false },
      );
      console.log(
        `[bench] audit: verified ${result.ok ? result.entries : '(broken!)'} entries in ${seconds.toFixed(2)} s`,
      );

      if (!tamper) tamper = await tamperCheck(owner);

      // The console's filtered queries (lib/read-models), on this size of trail.
      const label = `${size.toLocaleString('en-US')} entries`;
      const mid = new Date(START + Math.floor(loaded / 2));
      const chainSample = `bulk:s${step}p0:${Math.max(1, Math.floor(more / CHAIN_LENGTH / 4))}`;
      const q = {
        'first page, no filter': () => auditPage(db, {}, EVERY_WORKFLOW),
        'one actor (actor_id)': () => auditPage(db, { actor: 'rt-7' }, EVERY_WORKFLOW),
        'one run (run_id)': () => auditPage(db, { run: runUuid(7) }, EVERY_WORKFLOW),
        'time range (1 minute)': () =>
          auditPage(
            db,
            { from: mid.toISOString(), to: new Date(mid.getTime() + 60_000).toISOString() },
            EVERY_WORKFLOW,
          ),
        'one subject chain (chain, seq)': () =>
          db.auditEntry.findMany({ where: { chain: chainSample }, orderBy: { seq: 'asc' } }),
        'one effect, as the target page reads it (its chain and its refusals chain)': () =>
          db.auditEntry.findMany({
            where: { chain: { in: [chainSample, `refused:${chainSample}`] } },
            orderBy: { id: 'desc' },
            take: 100,
          }),
      };
      for (const [name, fn] of Object.entries(q)) queries[`${label}: ${name}`] = await timeRepeat(repeat, fn);
    }

    // Appends through appendAudit (the app role, one transaction each), `writers` at once.
    const actor = { kind: 'runtime' as const, id: 'bench-audit', label: 'bench audit writer', workflows: ['*'] };
    const subjects = Math.max(opts.writers * 8, Math.floor(opts.appends / 10));
    const append = (chain: string, i: number) =>
      appendAudit(db, {
        chain,
        actor,
        action: 'effect.report',
        subjectType: 'effect',
        subjectId: chain,
        before: 'a',
        after: 'b',
        detail: { i },
      });
    await closedLoop(Math.min(500, opts.appends), opts.writers, (i) => append(`warm:${i}`, i));
    console.log(`[bench] audit: ${opts.appends} appends over ${subjects} subjects, ${opts.writers} writers`);
    const manySubjects = await closedLoop(opts.appends, opts.writers, (i) => append(`many:${i % subjects}`, i));
    console.log(`[bench] audit: ${opts.appends} appends to one subject, ${opts.writers} writers`);
    const hotSubject = await closedLoop(opts.appends, opts.writers, (i) => append('hot:1', i));
    const head = await owner.query<{ seq: number }>(`SELECT seq FROM audit_chain_head WHERE chain = 'hot:1'`);
    return {
      writers: opts.writers,
      manySubjects,
      hotSubject,
      hotChainSeq: head.rows[0]?.seq ?? 0,
      verify,
      tamper: tamper!,
      queries,
    };
  } finally {
    await db.$disconnect();
    await owner.end();
  }
}

function runUuid(n: number): string {
  // md5('run' || n)::uuid, as the loader writes it.
  const hex = createHash('md5').update(`run${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Changes one entry's content inside a transaction that is rolled back: the verification must name it. */
async function tamperCheck(owner: pg.Client): Promise<AuditBench['tamper']> {
  await owner.query('BEGIN');
  try {
    const target = await owner.query<{ id: string }>(
      `SELECT id::text FROM audit_entry ORDER BY id OFFSET (SELECT count(*) / 2 FROM audit_entry) LIMIT 1`,
    );
    const entryId = target.rows[0]!.id;
    await owner.query('SET LOCAL session_replication_role = replica'); // past the append-only trigger, as an intruder with the owner's rights
    await owner.query(`UPDATE audit_entry SET reason = 'tampered' WHERE id = $1`, [entryId]);
    const broken = await owner.query<{ entry_id: string | null; problem: string }>(
      'SELECT entry_id::text, problem FROM audit_first_broken()',
    );
    return { entryId, reportedEntryId: broken.rows[0]?.entry_id ?? null, problem: broken.rows[0]?.problem ?? null };
  } finally {
    await owner.query('ROLLBACK');
  }
}
