import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, userActor } from '../helpers/factories.ts';
import { approvePlan, checkReplay, createRun } from '@/lib/ledger/index.ts';
import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
  toolName = (await makeTool(t.db)).name;
});

async function runWithPlan(targets: string[]) {
  const run = await makeRun(t.db);
  const items = targets.map((target, i) => ({
    tool: toolName,
    action: 'campaign_welcome',
    recordId: `rec-${i}`,
    target,
  }));
  const res = await post(`/runs/${run.runId}/plan`, { items }, { token });
  expect(res.status).toBe(201);
  return { run, items };
}
const claim = async (runId: string, item: { tool: string; action: string; recordId: string; target: string }) =>
  (await post('/effects/claim', { runId, ...item }, { token })).json();

describe('POST /api/v1/runs/{runId}/replay (F6)', () => {
  it('F6: a run with a target pending past its lease, one unknown and one stuck gets 409 with a problem document { code, detail, blocking, targets: [{ target, key, epoch, state, changedBy, changedAt }] }, audited', async () => {
    const { run, items } = await runWithPlan([
      'a@example.com',
      'b@example.com',
      'c@example.com',
      'd@example.com',
      'e@example.com',
    ]);
    const [a, b, c, d] = await Promise.all(items.slice(0, 4).map((i) => claim(run.runId, i)));
    await post(
      '/effects/outcome',
      { key: a.key, epoch: 1, attemptId: a.attemptId, outcome: 'done', receipt: 'msg_a' },
      { token },
    );
    await post(
      '/effects/outcome',
      { key: c.key, epoch: 1, attemptId: c.attemptId, outcome: 'unknown', evidence: { timeout: true } },
      { token },
    );
    await post(
      '/effects/outcome',
      { key: d.key, epoch: 1, attemptId: d.attemptId, outcome: 'stuck', evidence: { completionToken: 'lost' } },
      { token },
    );
    await t.owner(`UPDATE effect SET lease_expires_at = now() - interval '1 minute' WHERE key = $1`, [b.key]);
    const res = await post(`/runs/${run.runId}/replay`, {}, { token, idempotencyKey: 'replay-1' });
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['blocking', 'code', 'detail', 'status', 'targets', 'title', 'type']);
    expect(body.code).toBe('conflict');
    expect(body.targets).toHaveLength(5);
    for (const target of body.targets)
      expect(Object.keys(target).sort()).toEqual(['changedAt', 'changedBy', 'epoch', 'key', 'state', 'target']);
    expect(
      body.targets
        .slice(0, 3)
        .map((x: { target: string; state: string }) => `${x.target}:${x.state}`)
        .sort(),
    ).toEqual(['b@example.com:pending', 'c@example.com:unknown', 'd@example.com:stuck']);
    expect(body.targets.find((x: { target: string }) => x.target === 'e@example.com')).toMatchObject({
      state: 'not_started',
      epoch: null,
      changedBy: null,
    });
    expect(body.targets.find((x: { target: string }) => x.target === 'a@example.com')).toMatchObject({
      state: 'done',
      epoch: 1,
    });
    const retry = await post(`/runs/${run.runId}/replay`, {}, { token, idempotencyKey: 'replay-1' });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toEqual(body);
    const audit = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE chain = $1 AND action = 'run.replay_request'`,
      [`refused:run:${run.runId}`],
    );
    expect(audit.rows[0]!.n).toBe(1);
  });

  it('F6 P1: a pending target still inside its lease does not block; without blockers the answer is 202 with what may proceed (never claimed in the approved plan, failed) and what is skipped', async () => {
    const { run, items } = await runWithPlan(['f@example.com', 'g@example.com', 'h@example.com', 'i@example.com']);
    const [f, g] = await Promise.all(items.slice(0, 3).map((i) => claim(run.runId, i)));
    await post(
      '/effects/outcome',
      { key: f.key, epoch: 1, attemptId: f.attemptId, outcome: 'done', receipt: 'msg_f' },
      { token },
    );
    await post(
      '/effects/outcome',
      { key: g.key, epoch: 1, attemptId: g.attemptId, outcome: 'failed', evidence: { status: 422 } },
      { token },
    );
    // P1: while the plan waits for its approval, a target never claimed is not sent.
    const unapproved = await (await post(`/runs/${run.runId}/replay`, {}, { token })).json();
    expect(unapproved.proceed.map((x: { target: string }) => x.target)).toEqual(['g@example.com']);
    expect(unapproved.skip.map((x: { target: string; state: string }) => `${x.target}:${x.state}`)).toContain(
      'i@example.com:not_started',
    );
    const plan = await t.db.plan.findFirstOrThrow({ where: { runId: run.runId } });
    await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.id, itemsHash: plan.itemsHash });
    const res = await post(`/runs/${run.runId}/replay`, {}, { token });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.runId).toBe(run.runId);
    expect(body.proceed.map((x: { target: string }) => x.target).sort()).toEqual(['g@example.com', 'i@example.com']);
    expect(body.skip.map((x: { target: string; state: string }) => `${x.target}:${x.state}`).sort()).toEqual([
      'f@example.com:done',
      'h@example.com:pending',
    ]);
  });

  it('F6: a run with more targets than one answer lists is refused (409, replay from the console), not judged on its first targets', async () => {
    const { run } = await runWithPlan(['m1@example.com', 'm2@example.com', 'm3@example.com']);
    const ctx = { db: t.db, actor: { kind: 'runtime' as const, id: 'rt', label: 'rt', workflows: ['*'] } };
    const check = await checkReplay(ctx, { runId: run.runId }, { limit: 2 });
    expect(check).toMatchObject({ blocked: true, blocking: 0 });
    expect(check.blocked && check.reason).toMatch(/more than 2 targets: replay it from the console/);
    expect(await checkReplay(ctx, { runId: run.runId }, { limit: 3 })).toMatchObject({ blocked: false });
  });

  it('F6: a run whose tool history is known to be incomplete gets 409 even with no blocking target', async () => {
    const { run } = await runWithPlan(['j@example.com']);
    await t.owner('UPDATE run SET tool_history_complete = false WHERE id = $1', [run.runId]);
    const res = await post(`/runs/${run.runId}/replay`, {}, { token });
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.detail).toContain('incomplete');
    expect(body.targets).toEqual([expect.objectContaining({ target: 'j@example.com', state: 'not_started' })]);
  });

  it('P1: plan submission keys targets on the server and rejects invalid items one by one, writing nothing', async () => {
    const run = await makeRun(t.db);
    const res = await post(
      `/runs/${run.runId}/plan`,
      {
        items: [
          { tool: toolName, action: 'campaign_welcome', recordId: 'r1', target: 'ok@example.com' },
          { tool: toolName, action: 'campaign_welcome', recordId: 'r2', target: 'not-an-email' },
          { tool: toolName, action: 'nope', recordId: 'r3', target: 'x@example.com' },
        ],
      },
      { token },
    );
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.field).toBe('items.1.target');
    expect(body.items.map((i: { field: string }) => i.field)).toEqual(['items.1.target', 'items.2.action']);
    expect(await t.db.plan.count({ where: { runId: run.runId } })).toBe(0);
  });

  it('P1: plans submitted for one run at the same moment: one is written (201), the others are 409', async () => {
    for (let round = 0; round < 5; round++) {
      const run = await makeRun(t.db);
      const answers = await Promise.all(
        ['a', 'b', 'c', 'd'].map((who) =>
          post(
            `/runs/${run.runId}/plan`,
            { items: [{ tool: toolName, action: 'campaign_welcome', recordId: 'r1', target: `${who}@example.com` }] },
            { token },
          ),
        ),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      expect(await t.db.plan.count({ where: { runId: run.runId } })).toBe(1);
    }
  });

  it("P3, F6: a retried run of the same event that submitted no plan of its own is shown against the event's approved plan", async () => {
    const { run } = await runWithPlan(['k@example.com', 'l@example.com']);
    const plan = await t.db.plan.findFirstOrThrow({ where: { runId: run.runId } });
    await approvePlan({ db: t.db, actor: userActor('operator') }, { planId: plan.id, itemsHash: plan.itemsHash });
    const first = await claim(run.runId, {
      tool: toolName,
      action: 'campaign_welcome',
      recordId: 'rec-0',
      target: 'k@example.com',
    });
    await post(
      '/effects/outcome',
      { key: first.key, epoch: 1, attemptId: first.attemptId, outcome: 'done', receipt: 'msg_k' },
      { token },
    );
    const retried = await createRun(
      { db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } },
      { workflow: run.workflow, triggerId: run.triggerId },
    );
    const res = await post(`/runs/${retried.runId}/replay`, {}, { token });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(body.proceed.map((x: { target: string }) => x.target)).toEqual(['l@example.com']);
    expect(body.skip.map((x: { target: string; state: string }) => `${x.target}:${x.state}`)).toEqual([
      'k@example.com:done',
    ]);
  });
});
