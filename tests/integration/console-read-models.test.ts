// The console's read models (P3, P4): the plan joined with the ledger, keyset pages that add up to
// the whole plan in either direction, the two special views, and the exactly-once figure.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, suffix, userActor } from '../helpers/factories.ts';
import {
  approvePlan,
  bumpEpoch,
  claimEffect,
  completeEffect,
  revokeEffect,
  submitPlan,
  type Actor,
} from '@/lib/ledger/index.ts';
import { runHeader, runTable } from '@/lib/read-models/run-detail.ts';
import { listRuns } from '@/lib/read-models/runs.ts';
import { EVERY_WORKFLOW } from '@/lib/auth/grants.ts';

let t: TestDatabase;
let runId = '';
let planId = '';
const runtime: Actor = { kind: 'runtime', id: 'rt', label: 'rt', workflows: ['*'] };
const targets = Array.from({ length: 23 }, (_, i) => `t${String(i).padStart(2, '0')}-${suffix()}@example.com`);

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  runId = run.runId;
  const plan = await submitPlan(
    { db: t.db, actor: runtime },
    { runId, items: targets.map((target, i) => ({ tool: tool.name, action: 'receipt', recordId: `r${i}`, target })) },
  );
  planId = plan.planId;
  await approvePlan({ db: t.db, actor: userActor('operator') }, { planId, itemsHash: plan.itemsHash });
  const claim = (i: number, target = targets[i]!) =>
    claimEffect({ db: t.db, actor: runtime }, { runId, tool: tool.name, action: 'receipt', recordId: `r${i}`, target });
  // 0..9 done once; 10 done, bumped, done again (two done effects); 11 revoked; 12..22 never sent.
  for (let i = 0; i <= 11; i++) {
    const c = await claim(i);
    if (!c.claimed) throw new Error('lost');
    if (i <= 10) await completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: `m${i}` });
    else await revokeEffect({ db: t.db, actor: userActor('operator') }, { key: c.key, reason: 'asked' });
    if (i === 10) {
      await bumpEpoch({ db: t.db, actor: userActor('operator') }, { key: c.key, reason: 'resend' });
      const again = await claim(10);
      if (!again.claimed) throw new Error('lost the re-claim');
      await completeEffect({ db: t.db, actor: runtime }, { key: again.key, receipt: 'm10b' });
    }
  }
  await claim(99, `stray-${suffix()}@example.com`);
});

describe('run read models', () => {
  it('P4: exactly-once counts approved targets with exactly one done effect over all epochs', async () => {
    const h = await runHeader(t.db, runId, EVERY_WORKFLOW);
    expect(h!.exactlyOnce).toMatchObject({ numerator: 10, denominator: 23 });
    expect(h!.counts).toMatchObject({ done: 11, revoked: 1, pending: 1 });
    const list = await listRuns(t.db, { workflow: h!.workflow }, EVERY_WORKFLOW);
    expect(list.rows[0]!.exactlyOnce).toMatchObject({ numerator: 10, denominator: 23 });
  });

  it('P3: keyset pages add up to the whole plan in target order, ascending and descending', async () => {
    for (const sort of ['target', '-target']) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await runTable(t.db, runId, planId, { sort, cursor, limit: 5 });
        seen.push(...page.rows.map((r) => r.target));
        cursor = page.next ?? undefined;
      } while (cursor);
      const expected = [...targets].sort();
      expect(seen).toEqual(sort === 'target' ? expected : expected.reverse());
    }
  });

  it('P3: the plan rows carry state, epoch and who changed them; filters and prefix search work', async () => {
    const all = await runTable(t.db, runId, planId, { limit: 100 });
    const bumped = all.rows.find((r) => r.target === targets[10]);
    expect(bumped).toMatchObject({ epoch: 2, state: 'done', changedBy: 'rt' });
    expect((await runTable(t.db, runId, planId, { state: 'revoked' })).rows.map((r) => r.target)).toEqual([
      targets[11],
    ]);
    expect((await runTable(t.db, runId, planId, { q: targets[3]!.slice(0, 4) })).rows.map((r) => r.target)).toEqual([
      targets[3],
    ]);
  });

  it('P3: "approved but never sent" and "sent but not in the plan" views', async () => {
    const never = await runTable(t.db, runId, planId, { view: 'never_sent', limit: 100 });
    expect(never.rows.map((r) => r.target)).toEqual(targets.slice(12).sort());
    const stray = await runTable(t.db, runId, planId, { view: 'not_in_plan', limit: 100 });
    expect(stray.rows).toHaveLength(1);
    expect(stray.rows[0]!.target).toMatch(/^stray-/);
    expect(stray.rows[0]!.state).toBe('pending');
  });
});

describe('target page (A1): audit entries of one effect, its refusals included', () => {
  it('A1: the target page lists the claim, the completion and a refused transition of the key, newest first', async () => {
    const { targetDetail } = await import('@/lib/read-models/target.ts');
    const { makeEffect } = await import('../helpers/factories.ts');
    const effect = await makeEffect(t.db, 'done');
    // Support may not revoke (S5): refused, audited on the key's refusal chain.
    await expect(
      revokeEffect({ db: t.db, actor: userActor('support') }, { key: effect.key, reason: 'test' }),
    ).rejects.toThrow();
    const detail = await targetDetail(t.db, effect.key, EVERY_WORKFLOW);
    const audit = detail!.audit.map((a) => `${a.action}:${a.outcome}`);
    expect(audit[0]).toMatch(/:refused$/);
    expect(audit).toEqual(expect.arrayContaining(['effect.claim:ok', 'effect.complete:ok']));
    expect(detail!.audit.every((a) => a.subjectId === effect.key)).toBe(true);
  });
});
