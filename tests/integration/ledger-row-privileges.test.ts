// The application role changes ledger rows only through the ledger's rules (A3): every column of
// effect, effect_key, effect_transition, attempt, plan and plan_item is tried with a direct UPDATE as
// the application role, and refused (no privilege, or a guard trigger) except the columns the
// application's own commands write, and those only where a rule allows it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { approvePlan, recordResponse, rejectPlan, submitPlan } from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, runtimeActor, suffix, userActor } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 4 });
const app = new pg.Client({ connectionString: t.appUrl });

interface Column {
  table: string;
  column: string;
  type: string;
  udt: string;
}

let columns: Column[] = [];
const rows: Record<string, string> = {}; // a WHERE clause per row kind

beforeAll(async () => {
  await app.connect();
  const done = await makeEffect(t.db, 'done');
  const pending = await makeEffect(t.db, 'pending');
  const [attempt] = (await t.owner<{ id: string }>(`SELECT id FROM attempt WHERE key = $1`, [done.key])).rows;
  const [fresh] = (await t.owner<{ id: string }>(`SELECT id FROM attempt WHERE key = $1`, [pending.key])).rows;
  await recordResponse(
    { db: t.db, actor: done.runtime },
    { attemptId: attempt!.id, status: 200, headers: [['x', 'y']], body: new Uint8Array([1, 2]) },
  );
  rows.effect = `key = '${done.key}'`;
  rows.effect_key = `key = '${done.key}'`;
  rows.effect_transition = `key = '${done.key}'`;
  rows.attempt_stored = `id = '${attempt!.id}'`;
  rows.attempt_fresh = `id = '${fresh!.id}'`;

  const tool = (await makeTool(t.db)).name;
  const author = runtimeActor();
  const plans: Record<string, string> = {};
  for (const fate of ['submitted', 'approved', 'rejected'] as const) {
    const { runId } = await makeRun(t.db);
    const n = suffix();
    const items = [{ tool, action: 'campaign_welcome', recordId: `c-${n}`, target: `u-${n}@example.com` }];
    const plan = await submitPlan({ db: t.db, actor: author }, { runId, items });
    if (fate === 'approved')
      await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.planId, itemsHash: plan.itemsHash });
    if (fate === 'rejected')
      await rejectPlan({ db: t.db, actor: userActor('operator') }, { planId: plan.planId, reason: 'not this week' });
    plans[fate] = plan.planId;
  }
  for (const [fate, id] of Object.entries(plans)) {
    rows[`plan_${fate}`] = `id = '${id}'`;
    rows[`plan_item_${fate}`] = `plan_id = '${id}'`;
  }

  columns = (
    await t.owner<Column>(
      `SELECT table_name AS table, column_name AS column, data_type AS type, udt_name AS udt
         FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ANY ($1)
        ORDER BY table_name, ordinal_position`,
      [['effect', 'effect_key', 'effect_transition', 'attempt', 'plan', 'plan_item']],
    )
  ).rows;
});

afterAll(() => app.end());

/** An expression for a value different from the column's current one, whatever its type. */
function changed(c: Column): string {
  const col = `"${c.column}"`;
  switch (c.type) {
    case 'text':
      return `coalesce(${col}, '') || 'x'`;
    case 'integer':
    case 'bigint':
    case 'smallint':
      return `coalesce(${col}, 0) + 1`;
    case 'boolean':
      return `NOT coalesce(${col}, false)`;
    case 'timestamp with time zone':
      return `coalesce(${col}, now()) + interval '1 second'`;
    case 'jsonb':
      return `'{"changed": true}'::jsonb`;
    case 'bytea':
      return `'\\x00ff'::bytea`;
    case 'uuid':
      return `gen_random_uuid()`;
    case 'USER-DEFINED':
      return `(SELECT v FROM unnest(enum_range(NULL::"${c.udt}")) v WHERE v IS DISTINCT FROM ${col} LIMIT 1)`;
    case 'ARRAY':
      return `${col} || ${col}`;
    default:
      throw new Error(`no changed value for ${c.table}.${c.column} (${c.type})`);
  }
}

/** Tries the UPDATE as the application role inside a rolled-back transaction: null when it was
 *  allowed, else the SQLSTATE that refused it. */
async function tryAsApp(sql: string): Promise<string | null> {
  await app.query('BEGIN');
  try {
    await app.query(sql);
    return null;
  } catch (error) {
    return (error as { code?: string }).code ?? 'unknown';
  } finally {
    await app.query('ROLLBACK');
  }
}

// What the application's own commands write, and only in the state where a rule lets them.
const ALLOWED = new Set([
  ...['response_status', 'response_headers', 'response_body', 'responded_at'].map((c) => `attempt_fresh.${c}`),
  ...['status', 'approved_by_id', 'approved_at', 'rejected_by_id', 'rejected_at', 'rejection_reason'].map(
    (c) => `plan_submitted.${c}`,
  ),
]);

function rowKinds(table: string): string[] {
  if (table === 'attempt') return ['attempt_stored', 'attempt_fresh'];
  if (table === 'plan' || table === 'plan_item')
    return ['submitted', 'approved', 'rejected'].map((f) => `${table}_${f}`);
  return [table];
}

describe('ledger rows as the application role (A3)', () => {
  it('refuses an UPDATE of every column except the ones the commands write, where a rule allows it', async () => {
    expect(columns.length).toBeGreaterThan(50);
    const outcomes: string[] = [];
    for (const c of columns) {
      for (const kind of rowKinds(c.table)) {
        const code = await tryAsApp(`UPDATE ${c.table} SET "${c.column}" = ${changed(c)} WHERE ${rows[kind]}`);
        const expected = ALLOWED.has(`${kind}.${c.column}`);
        outcomes.push(`${kind}.${c.column}: ${code === null ? 'changed' : `refused ${code}`}`);
        if (expected) expect(code, `${kind}.${c.column}`).toBeNull();
        else expect(code, `${kind}.${c.column}`).toMatch(/^(42501|EL00\d)$/);
      }
    }
    expect(outcomes.filter((o) => o.endsWith('changed'))).toHaveLength(ALLOWED.size);
  });

  it('lets retention clear a stored response, never rewrite it', async () => {
    const clear = `UPDATE attempt SET response_headers = NULL, response_body = NULL WHERE ${rows.attempt_stored}`;
    expect(await tryAsApp(clear)).toBeNull();
    const rewrite = `UPDATE attempt SET response_body = '\\x01'::bytea WHERE ${rows.attempt_stored}`;
    expect(await tryAsApp(rewrite)).toBe('EL004');
  });

  it('refuses inserts outside the ledger functions, and a plan that does not start submitted', async () => {
    for (const table of ['effect', 'effect_key', 'effect_transition', 'attempt']) {
      expect(await tryAsApp(`INSERT INTO ${table} SELECT * FROM ${table} LIMIT 1`), table).toBe('42501');
    }
    const approvedPlan = `INSERT INTO plan (id, run_id, status, author_kind, author_id, author_label, items_hash)
      SELECT gen_random_uuid(), run_id, 'approved', author_kind, author_id, author_label, items_hash FROM plan LIMIT 1`;
    expect(await tryAsApp(approvedPlan)).toBe('EL004');
  });

  it('refuses a DELETE of any ledger row', async () => {
    for (const table of ['effect', 'effect_key', 'effect_transition', 'attempt', 'plan', 'plan_item']) {
      expect(await tryAsApp(`DELETE FROM ${table}`), table).toBe('42501');
    }
  });
});
