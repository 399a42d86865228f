// Console read models on runs of 10,000, 100,000 and 1,000,000 plan items (issues 4 and 7: the same
// figures at three sizes 10x apart): the first page, a deep keyset page (90% of the way in) and the
// per-state counts, timed server-side (the read-model call the page makes, on the app role's
// connection), p50 / p95 over repeated calls. Each size is its own run in the same database.
// The data is bulk-loaded with set-based SQL as the owner, because a million claims through the API
// would measure the claim path instead (that is the claims benchmark).
import pg from 'pg';
import { createDb } from '@/lib/db/client.ts';
import { runTable } from '@/lib/read-models/run-detail.ts';
import { exactlyOnceOfPlan } from '@/lib/read-models/exactly-once.ts';
import { countRun, listRuns } from '@/lib/read-models/runs.ts';
import { encodeCursor } from '@/lib/read-models/common.ts';

import { timeRepeat as time } from './harness.ts';
import { loadRunHistory, timelineFigures } from './timeline.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

export const DEFAULT_CONSOLE_SIZES = [10_000, 100_000, 1_000_000];
const REPEAT = 40;

export async function loadMillionItemRun(
  ownerUrl: string,
  items = 1_000_000,
): Promise<{ runId: string; planId: string }> {
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    const tag = `bench_${Date.now().toString(36)}`;
    await owner.query('BEGIN');
    const ev = await owner.query<{ id: string }>(
      `INSERT INTO event (id, trigger_id, workflow) VALUES (gen_random_uuid(), $1, 'bench_console') RETURNING id`,
      [`evt_${tag}`],
    );
    const run = await owner.query<{ id: string }>(
      `INSERT INTO run (id, workflow, event_id, created_by_kind, created_by) VALUES (gen_random_uuid(), 'bench_console', $1, 'system', 'bench') RETURNING id`,
      [ev.rows[0]!.id],
    );
    const runId = run.rows[0]!.id;
    const plan = await owner.query<{ id: string }>(
      `INSERT INTO plan (id, run_id, author_kind, author_id, author_label, item_count, items_hash) VALUES (gen_random_uuid(), $1, 'system', 'bench', 'bench', $2, repeat('0', 64)) RETURNING id`,
      [runId, items],
    );
    const planId = plan.rows[0]!.id;
    // Plan items go in while the plan is still submitted (the freeze trigger checks each row).
    await owner.query(
      `INSERT INTO plan_item (plan_id, run_id, key, tool, action, record_id, target, target_type)
       SELECT $1, $2, $3 || ':' || g, 'send_email', 'campaign_welcome', 'rec_' || g, 'user' || lpad(g::text, 7, '0') || '@example.com', 'email'
       FROM generate_series(1, $4) g`,
      [planId, runId, tag, items],
    );
    await owner.query(`UPDATE plan SET status = 'approved', approved_at = now() WHERE id = $1`, [planId]);
    // 90% of the targets have an effect: mostly done, some pending, unknown, failed, revoked. The
    // rows are written in their final state in one statement each, with this session's triggers
    // off (session_replication_role = replica, superuser only): the transition guard would otherwise
    // make every effect start pending and be updated, which only slows the load.
    await owner.query(`SET LOCAL session_replication_role = replica`);
    await owner.query(
      `INSERT INTO effect_key (key, tool, action, record_id, target, target_type, trigger_id, run_id, current_epoch, state, changed_by)
       SELECT $1 || ':' || g, 'send_email', 'campaign_welcome', 'rec_' || g, 'user' || lpad(g::text, 7, '0') || '@example.com', 'email', $2, $3, 1,
              (CASE WHEN g % 100 < 80 THEN 'done' WHEN g % 100 < 85 THEN 'pending' WHEN g % 100 < 87 THEN 'unknown' WHEN g % 100 < 89 THEN 'failed' ELSE 'revoked' END)::"EffectState",
              'bench'
       FROM generate_series(1, $4) g WHERE g % 10 <> 0`,
      [tag, `evt_${tag}`, runId, items],
    );
    await owner.query(
      `INSERT INTO effect (key, epoch, state, run_id, idempotency_key, receipt, changed_by_kind, changed_by)
       SELECT key, 1, state, run_id, key || '#1', CASE WHEN state = 'done' THEN 'msg_' || record_id END, 'system', 'bench' FROM effect_key WHERE run_id = $1`,
      [runId],
    );
    await owner.query('COMMIT');
    await owner.query('VACUUM ANALYZE plan_item');
    await owner.query('VACUUM ANALYZE effect_key');
    await owner.query('VACUUM ANALYZE effect');
    return { runId, planId };
  } catch (error) {
    await owner.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await owner.end();
  }
}

export interface ConsoleSize {
  items: number;
  /** Plan items and effects the run holds after the load: must be items and 90% of items. */
  rows: { planItems: number; effects: number };
  figures: Record<string, number>;
}

export async function benchConsole(opts: {
  ownerUrl: string;
  appUrl: string;
  sizes?: number[];
  repeat?: number;
}): Promise<ConsoleSize[]> {
  const out: ConsoleSize[] = [];
  for (const items of opts.sizes ?? DEFAULT_CONSOLE_SIZES)
    out.push(await benchConsoleSize(opts, items, opts.repeat ?? REPEAT));
  return out;
}

async function benchConsoleSize(
  opts: { ownerUrl: string; appUrl: string },
  items: number,
  repeat: number,
): Promise<ConsoleSize> {
  console.log(`[bench] console: loading a run of ${items} plan items`);
  const loadStart = performance.now();
  const { runId, planId } = await loadMillionItemRun(opts.ownerUrl, items);
  const loadMs = performance.now() - loadStart;
  console.log(`[bench] console: giving the run's ${items} targets their claims, calls and state changes`);
  const historyStart = performance.now();
  await loadRunHistory(opts.ownerUrl, runId);
  const historyMs = performance.now() - historyStart;
  const db = createDb(opts.appUrl, 8);
  try {
    // The cursor a person reaches after paging 90% of the way in (the 900,000th of a million).
    const deepOffset = Math.floor(items * 0.9) - 1;
    const [deep] = await db.$queryRaw<{ target: string; id: bigint }[]>`
      SELECT target, id FROM plan_item WHERE run_id = ${runId}::uuid ORDER BY target, id OFFSET ${deepOffset} LIMIT 1`;
    const deepCursor = encodeCursor([deep!.target, String(deep!.id)]);
    const first = await time(repeat, () => runTable(db, runId, planId, { limit: 50 }));
    const deepPage = await time(repeat, () => runTable(db, runId, planId, { limit: 50, cursor: deepCursor }));
    const deepDesc = await time(repeat, () =>
      runTable(db, runId, planId, { limit: 50, sort: '-target', cursor: deepCursor }),
    );
    const unknownFilter = await time(repeat, () => runTable(db, runId, planId, { limit: 50, state: 'unknown' }));
    const search = await time(repeat, () => runTable(db, runId, planId, { limit: 50, q: 'user0000731' }));
    // The counts computed each time (a page view of a run over 50,000 keys shares one computation
    // at most 5 s old, which would time a cache hit).
    const counts = await time(repeat, () => countRun(db, runId));
    // P4 over a big run is recomputed at most once a minute (the page says "as of"); the runs list
    // then serves the memoized figure.
    const p4 = await time(3, () => exactlyOnceOfPlan(db, planId, 0));
    const runsList = await time(repeat, () => listRuns(db, { workflow: 'bench_console' }, EVERY_WORKFLOW));
    const timeline = await timelineFigures(db, runId, repeat);
    const [rows] = await db.$queryRaw<{ plan_items: bigint; effects: bigint }[]>`
      SELECT (SELECT count(*) FROM plan_item WHERE run_id = ${runId}::uuid) AS plan_items,
             (SELECT count(*) FROM effect_key WHERE run_id = ${runId}::uuid) AS effects`;
    return {
      items,
      rows: { planItems: Number(rows!.plan_items), effects: Number(rows!.effects) },
      figures: {
        'bulk load (s)': loadMs / 1000,
        'first page p50 ms': first.p50,
        'first page p95 ms': first.p95,
        'deep keyset page (90% in) p50 ms': deepPage.p50,
        'deep keyset page (90% in) p95 ms': deepPage.p95,
        'deep page, descending p95 ms': deepDesc.p95,
        'filter state=unknown, first page p95 ms': unknownFilter.p95,
        'target prefix search p95 ms': search.p95,
        'per-state counts p50 ms': counts.p50,
        'per-state counts p95 ms': counts.p95,
        'deep / first page p50 ratio': deepPage.p50 / first.p50,
        'P4 exactly-once recompute p50 ms': p4.p50,
        'runs list page (P4 memoized) p95 ms': runsList.p95,
        'history load for the timeline (s)': historyMs / 1000,
        ...timeline,
      },
    };
  } finally {
    await db.$disconnect();
  }
}
