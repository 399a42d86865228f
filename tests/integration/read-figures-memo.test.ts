// Whole-run figures shared while nothing changes (docs/BENCHMARKS.md, operator pages): the change mark
// moves with every audited state change and not with reads, a figure computed once is reused while the
// mark stands, and a change is seen on the very next view.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, suffix, userActor } from '../helpers/factories.ts';
import { approvePlan, claimEffect, completeEffect, submitPlan, type Actor } from '@/lib/ledger/index.ts';
import { recordAuditRead } from '@/lib/audit/record-read.ts';
import { changeMark } from '@/lib/read-models/change-mark.ts';
import { rememberWhileUnchanged } from '@/lib/read-models/common.ts';
import { exactlyOnce } from '@/lib/read-models/runs.ts';

let t: TestDatabase;
let runId = '';
let planId = '';
let toolName = '';
const runtime: Actor = { kind: 'runtime', id: 'rt', label: 'rt', workflows: ['*'] };
const targets = Array.from({ length: 6 }, (_, i) => `m${i}-${suffix()}@example.com`);
const claim = (i: number) =>
  claimEffect(
    { db: t.db, actor: runtime },
    { runId, tool: toolName, action: 'receipt', recordId: `r${i}`, target: targets[i]! },
  );

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  toolName = (await makeTool(t.db)).name;
  runId = (await makeRun(t.db)).runId;
  const plan = await submitPlan(
    { db: t.db, actor: runtime },
    { runId, items: targets.map((target, i) => ({ tool: toolName, action: 'receipt', recordId: `r${i}`, target })) },
  );
  planId = plan.planId;
  await approvePlan({ db: t.db, actor: userActor('operator') }, { planId, itemsHash: plan.itemsHash });
});

describe('figures shared while nothing changes', () => {
  it('P4: the change mark moves with a state change, not with a read of the trail', async () => {
    const before = await changeMark(t.db);
    await recordAuditRead(t.db, {
      actor: userActor('auditor'),
      filter: {},
      cursor: null,
      request: { ip: '127.0.0.1', userAgent: 'test', requestId: randomUUID() },
    });
    expect(await changeMark(t.db)).toBe(before);
    const c = await claim(0);
    expect(c.claimed).toBe(true);
    expect(await changeMark(t.db)).not.toBe(before);
  });

  it('P4: the change mark is the newest change by number, not by text (entry 100 after entry 99)', async () => {
    // Enough entries that ids cross a power of ten, so a text sort ('99' > '100') would be caught.
    for (let i = 0; i < 120; i++)
      await recordAuditRead(t.db, {
        actor: userActor('auditor'),
        filter: {},
        cursor: null,
        request: { ip: '127.0.0.1', userAgent: 'test', requestId: randomUUID() },
      });
    const c = await claim(5);
    expect(c.claimed).toBe(true);
    const newest = await t.owner<{ id: string }>(
      `SELECT max(id)::text AS id FROM audit_entry WHERE action NOT IN ('audit.read', 'run.read', 'effect.read')`,
    );
    expect(Number(newest.rows[0]!.id)).toBeGreaterThan(100);
    expect(await changeMark(t.db)).toBe(newest.rows[0]!.id);
  });

  it('P4: a figure is computed once while the mark stands, and again as soon as it moves', async () => {
    let computed = 0;
    const compute = async () => ++computed;
    const mark = () => changeMark(t.db);
    const key = `memo-test:${randomUUID()}`;
    expect(await Promise.all([1, 2, 3].map(() => rememberWhileUnchanged(key, compute, mark)))).toEqual([1, 1, 1]);
    expect(await rememberWhileUnchanged(key, compute, mark)).toBe(1);
    await claim(1);
    expect(await rememberWhileUnchanged(key, compute, mark)).toBe(2);
  });

  it('P4: a computation that started before a change does not answer a view that came after it', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const compute = async () => {
      const n = ++started;
      if (n === 1) await gate; // the first computation is still running when the change commits
      return n;
    };
    const mark = () => changeMark(t.db);
    const key = `memo-test:${randomUUID()}`;
    const early = rememberWhileUnchanged(key, compute, mark);
    while (started === 0) await new Promise((resolve) => setImmediate(resolve));
    await claim(3);
    const late = rememberWhileUnchanged(key, compute, mark);
    expect(await late).toBe(2);
    release();
    expect(await early).toBe(1);
    // The newer figure stays: the early one finished last but began before it.
    expect(await rememberWhileUnchanged(key, compute, mark)).toBe(2);
  });

  it('P4: the exact figure of a small plan follows each completed effect on the next view', async () => {
    const first = await exactlyOnce(t.db, planId, targets.length);
    expect(first).toMatchObject({ numerator: 0, denominator: 6, asOf: null });
    const c = await claim(2);
    if (!c.claimed) throw new Error('lost');
    await completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: 'x' });
    expect((await exactlyOnce(t.db, planId, targets.length)).numerator).toBe(1);
    expect((await exactlyOnce(t.db, planId, targets.length)).numerator).toBe(1);
  });
});
