// Keyset pages over a time column: rows a microsecond apart, inside one millisecond, each appear on
// exactly one page. A cursor built from a JavaScript Date (milliseconds) skipped the later ones.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool } from '../helpers/factories.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';
import { listRuns } from '@/lib/read-models/runs.ts';
import { supportQueue } from '@/lib/read-models/support.ts';
import { encodeCursor } from '@/lib/read-models/common.ts';

let t: TestDatabase;
const workflow = `wf_usec_${Date.now().toString(36)}`;
let runIds: string[] = [];
let unknownKeys: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  runIds = [];
  for (let i = 0; i < 4; i++) runIds.push((await makeRun(t.db, workflow)).runId);
  // Four runs inside one millisecond, a microsecond apart.
  for (const [i, id] of runIds.entries())
    await t.owner(
      `UPDATE run SET created_at = '2026-01-02 03:04:05.123' ::timestamptz + make_interval(secs => $2::float / 1e6) WHERE id = $1`,
      [id, 100 + i],
    );
  const tool = (await makeTool(t.db)).name;
  const runId = (await makeRun(t.db)).runId;
  unknownKeys = [];
  for (let i = 0; i < 4; i++) unknownKeys.push((await makeEffect(t.db, 'unknown', { tool, runId })).key);
  for (const [i, key] of unknownKeys.entries())
    await t.owner(
      `UPDATE effect_key SET changed_at = '2020-01-02 03:04:05.123'::timestamptz + make_interval(secs => $2::float / 1e6) WHERE key = $1`,
      [key, 100 + i],
    );
});

describe('keyset cursors keep microseconds', () => {
  it('P3: the runs list, one run a page, shows each of four runs a microsecond apart once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listRuns(t.db, { workflow, cursor, limit: 1 }, EVERY_WORKFLOW);
      seen.push(...page.rows.map((r) => r.id));
      cursor = page.next ?? undefined;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([...runIds].reverse());
  });

  it('S4: the support queue, one key a page, shows each of four unknowns a microsecond apart once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await supportQueue(t.db, EVERY_WORKFLOW, { cursor, limit: 1 });
      seen.push(...page.rows.map((r) => r.key).filter((k) => unknownKeys.includes(k)));
      cursor = page.next ?? undefined;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual(unknownKeys);
  });

  it('S4: a cursor that is not a database timestamp is ignored (first page), not an error', async () => {
    const bad = encodeCursor(['not a time', 'x']);
    const page = await supportQueue(t.db, EVERY_WORKFLOW, { cursor: bad, limit: 1 });
    expect(page.rows).toHaveLength(1);
    const runs = await listRuns(
      t.db,
      { workflow, cursor: encodeCursor(['2026-13-45', runIds[0]]), limit: 1 },
      EVERY_WORKFLOW,
    );
    expect(runs.rows.map((r) => r.id)).toEqual([runIds[3]]);
  });
});
