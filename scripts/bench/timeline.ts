// A run's timeline on the console section's bulk-loaded runs: each effect is given the history the
// ledger writes for it (its claim's audit entry and provider call, the answer for the finished ones,
// and the state change after it), then the timeline's first page, a page 90% of the way in, the
// oldest-first page and the filtered pages are timed as the page's view calls them. Loaded as the
// owner with triggers off (as ./console.ts loads the run): the trail's hashes are not what is measured.
import pg from 'pg';
import { Prisma, type Db } from '@/lib/db/client.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { runTimeline } from '@/lib/read-models/run-timeline.ts';
import { timelineCursor, timelineQuery } from '@/lib/read-models/run-timeline-query.ts';
import { timelineSql } from '@/lib/read-models/run-timeline-sql.ts';
import { timeRepeat as time } from './harness.ts';

export async function loadRunHistory(ownerUrl: string, runId: string): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    await owner.query('BEGIN');
    await owner.query(`SET LOCAL session_replication_role = replica`);
    // One call per effect, 10 ms apart; the finished ones answered 150 ms later.
    await owner.query(
      `INSERT INTO attempt (id, effect_id, key, epoch, run_id, started_at, response_status, responded_at)
       SELECT gen_random_uuid(), e.id, e.key, 1, e.run_id, '2026-01-01'::timestamptz + make_interval(secs => e.id::float8 / 100),
              CASE WHEN e.state IN ('done', 'failed') THEN 200 END,
              CASE WHEN e.state IN ('done', 'failed') THEN '2026-01-01'::timestamptz + make_interval(secs => e.id::float8 / 100 + 0.15) END
         FROM effect e WHERE e.run_id = $1`,
      [runId],
    );
    await owner.query(
      `INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action, subject_type,
                               subject_id, run_id, before_state, after_state, outcome, detail)
       SELECT 'effect:' || t.key, 1, '', '', t.started_at, 'runtime', 'bench', 'bench runtime', 'effect.claim', 'effect',
              t.key, t.run_id, NULL, 'pending', 'ok', jsonb_build_object('epoch', 1, 'attemptId', t.id)
         FROM attempt t WHERE t.run_id = $1`,
      [runId],
    );
    await owner.query(
      `INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action, subject_type,
                               subject_id, run_id, before_state, after_state, outcome, detail)
       SELECT 'effect:' || t.key, 2, '', '', t.started_at + interval '200 milliseconds',
              CASE WHEN e.state = 'revoked' THEN 'user' ELSE 'runtime' END::"ActorKind", 'bench',
              CASE WHEN e.state = 'revoked' THEN 'operator@example.com' ELSE 'bench runtime' END,
              CASE e.state WHEN 'done' THEN 'effect.complete' WHEN 'failed' THEN 'effect.fail'
                           WHEN 'unknown' THEN 'effect.mark_unknown' ELSE 'effect.revoke' END,
              'effect', t.key, t.run_id, 'pending', e.state::text, 'ok', jsonb_build_object('epoch', 1)
         FROM attempt t JOIN effect e ON e.id = t.effect_id WHERE t.run_id = $1 AND e.state <> 'pending'`,
      [runId],
    );
    await owner.query('COMMIT');
    await owner.query('VACUUM ANALYZE attempt');
    await owner.query('VACUUM ANALYZE audit_entry');
  } catch (error) {
    await owner.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await owner.end();
  }
}

/** The plan's scans, one line: which index each source was read with (a Seq Scan would show here). */
async function planScans(db: Db, runId: string, sp: Record<string, string>): Promise<string> {
  const sql = timelineSql(runId, timelineQuery(sp), null)!;
  const [row] = await db.$queryRaw<{ 'QUERY PLAN': unknown }[]>(Prisma.sql`EXPLAIN (FORMAT JSON) ${sql}`);
  const scans: string[] = [];
  const visit = (n: Record<string, unknown>) => {
    if (String(n['Node Type']).includes('Scan') && n['Relation Name'])
      scans.push(`${String(n['Node Type'])} ${String(n['Index Name'] ?? n['Relation Name'])}`);
    for (const child of (n.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((row!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan);
  return [...new Set(scans)].join(', ');
}

export async function timelineFigures(db: Db, runId: string, repeat: number): Promise<Record<string, number>> {
  const page = (sp: Record<string, string>) =>
    runTimeline(db, runId, EVERY_WORKFLOW, timelineQuery({ rows: '50', ...sp }));
  // The cursor a person reaches after paging 90% of the way back through the provider calls.
  const [{ n }] = (await db.$queryRaw<
    { n: bigint }[]
  >`SELECT count(*) AS n FROM attempt WHERE run_id = ${runId}::uuid`) as [{ n: bigint }];
  const [deep] = await db.$queryRaw<{ at: string; tie: string }[]>`
    SELECT started_at::text AS at, 't' || id::text AS tie FROM attempt WHERE run_id = ${runId}::uuid
     ORDER BY started_at DESC, ('t' || id::text) COLLATE "C" DESC OFFSET ${Math.floor(Number(n) * 0.9)} LIMIT 1`;
  const cursor = deep ? timelineCursor(deep.at, deep.tie) : undefined;
  const [target] = await db.$queryRaw<{ target: string }[]>`
    SELECT target FROM effect_key WHERE run_id = ${runId}::uuid ORDER BY key LIMIT 1`;
  console.log(`[bench] timeline plan, first page: ${await planScans(db, runId, {})}`);
  console.log(`[bench] timeline plan, decisions: ${await planScans(db, runId, { kind: 'decision' })}`);
  const first = await time(repeat, () => page({}));
  const deepPage = await time(repeat, () => page(cursor ? { cursor } : {}));
  const oldest = await time(repeat, () => page({ order: 'oldest' }));
  const decisions = await time(repeat, () => page({ kind: 'decision' }));
  const byTarget = await time(repeat, () => page({ target: target?.target.toUpperCase() ?? 'x' }));
  return {
    'timeline first page p50 ms': first.p50,
    'timeline first page p95 ms': first.p95,
    'timeline deep page (90% in) p50 ms': deepPage.p50,
    'timeline deep page (90% in) p95 ms': deepPage.p95,
    'timeline oldest first p95 ms': oldest.p95,
    'timeline decisions only p95 ms': decisions.p95,
    'timeline one target p95 ms': byTarget.p95,
  };
}
