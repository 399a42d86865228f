// The management API's operations with personal access tokens (docs/MANAGE.md): each decision is the
// console's own (same guard, version check, command and audit entry), answered as JSON or a problem
// document naming what is wrong: another role, another workflow, the same person twice on a four-eyes
// request, a decision without its version, a bad body.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, snapshot, suffix } from '../helpers/factories.ts';
import { seenOf, seenOfKeys } from '../helpers/seen.ts';
import { call, person, type Person } from './manage-support.ts';
import { makeCampaign } from './replay-fixtures.ts';

let t: TestDatabase;
let ops: { alice: Person; bob: Person; support: Person; admin: Person; auditor: Person };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'manage-api-test-secret';
  (await import('@/lib/env.ts')).resetEnvCache();
  ops = {
    alice: await person(t.db, 'operator'),
    bob: await person(t.db, 'operator'),
    support: await person(t.db, 'support'),
    admin: await person(t.db, 'admin'),
    auditor: await person(t.db, 'auditor'),
  };
});

const entries = async (action: string, subjectId: string) =>
  (
    await t.owner<{ actor_id: string; outcome: string }>(
      `SELECT actor_id, outcome FROM audit_entry WHERE action = $1 AND subject_id = $2 ORDER BY id`,
      [action, subjectId],
    )
  ).rows;

async function submittedPlan(workflow?: string) {
  const { submitPlan } = await import('@/lib/ledger/index.ts');
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db, workflow);
  const plan = await submitPlan(
    { db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `p-${suffix()}@example.com` }],
    },
  );
  return { ...plan, runId: run.runId };
}

describe('Z2, Z8: management API: decisions', () => {
  it('plan approve: 422 naming seenStatus without it, 403 for support, 200 for an operator with the same audit entry as the console', async () => {
    const plan = await submittedPlan();
    const body = { planId: plan.planId, itemsHash: plan.itemsHash };
    const before = await snapshot(t.db);
    const blind = await call('POST', '/plans/approve', ops.alice, body);
    expect(blind).toMatchObject({ status: 422, body: { code: 'validation', field: 'seenStatus' } });
    expect(blind.body.detail).toContain('seen');
    const wrongRole = await call('POST', '/plans/approve', ops.support, { ...body, seenStatus: 'submitted' });
    expect(wrongRole).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(await snapshot(t.db)).toEqual(before);
    const ok = await call('POST', '/plans/approve', ops.alice, { ...body, seenStatus: 'submitted' });
    expect(ok.status).toBe(200);
    // The blind and the wrong-role attempts are on the trail as refusals, as from the console (A4).
    expect(await entries('plan.approve', plan.planId)).toEqual([
      { actor_id: ops.alice.id, outcome: 'refused' },
      { actor_id: ops.support.id, outcome: 'refused' },
      { actor_id: ops.alice.id, outcome: 'ok' },
    ]);
    const again = await call('POST', '/plans/approve', ops.bob, { ...body, seenStatus: 'submitted' });
    expect(again.status).toBe(409);
  });

  it('revoke: one version per key required, another workflow refused (403 to decide, 404 to read), in-scope revoke audited', async () => {
    const wf = `wf_${suffix()}`;
    const scoped = await person(t.db, 'operator', wf);
    const outside = await makeEffect(t.db, 'done');
    const missing = await call('POST', '/effects/revoke', scoped, { keys: [outside.key], reason: 'bounce' });
    expect(missing.status).toBe(403);
    expect((await call('GET', `/targets/${encodeURIComponent(outside.key)}`, scoped)).status).toBe(404);
    expect((await call('GET', `/runs/${outside.runId}`, scoped)).status).toBe(404);

    const run = await makeRun(t.db, wf);
    const inside = await makeEffect(t.db, 'done', { runId: run.runId });
    const blind = await call('POST', '/effects/revoke', scoped, { keys: [inside.key], reason: 'bounce' });
    expect(blind).toMatchObject({ status: 422, body: { field: 'seen' } });
    const seen = await seenOfKeys(t.db, [inside.key]);
    const done = await call('POST', '/effects/revoke', scoped, { keys: [inside.key], reason: 'bounce', seen });
    expect(done).toMatchObject({ status: 200, body: { revoked: 1, failed: [] } });
    expect(await entries('effect.revoke', inside.key)).toEqual([
      { actor_id: scoped.id, outcome: 'refused' },
      { actor_id: scoped.id, outcome: 'ok' },
    ]);
    const target = await call('GET', `/targets/${encodeURIComponent(inside.key)}`, scoped);
    expect(target.status).toBe(200);
    expect((await call('GET', `/runs/${run.runId}`, scoped)).status).toBe(200);
  });

  it('bumps: the requester cannot approve their own request (refused, audited); another operator can', async () => {
    const e = await makeEffect(t.db, 'done');
    const requested = await call('POST', '/bumps/request', ops.alice, {
      keys: [e.key],
      reason: 'resend after template fix',
      seen: await seenOfKeys(t.db, [e.key]),
    });
    expect(requested).toMatchObject({ status: 200, body: { mode: 'requested' } });
    const { requestId, setHash } = requested.body as { requestId: string; setHash: string };
    const decide = { requestId, setHash, seenStatus: 'open', decision: 'approve' };
    const self = await call('POST', '/bumps/decide', ops.alice, decide);
    expect(self.status).toBe(403);
    expect(self.body.detail).toContain('own request');
    const blind = await call('POST', '/bumps/decide', ops.bob, { requestId, setHash, decision: 'approve' });
    expect(blind).toMatchObject({ status: 422, body: { field: 'seenStatus' } });
    const approved = await call('POST', '/bumps/decide', ops.bob, decide);
    expect(approved.status).toBe(200);
    expect(await entries('approval.approve', requestId)).toEqual(
      expect.arrayContaining([
        { actor_id: ops.alice.id, outcome: 'refused' },
        { actor_id: ops.bob.id, outcome: 'ok' },
      ]),
    );
    const approvals = await call('GET', '/approvals', ops.auditor);
    expect(JSON.stringify(approvals.body)).toContain(requestId);
  });

  it('resolve an unknown: support only, with its version', async () => {
    const e = await makeEffect(t.db, 'unknown');
    const body = { key: e.key, outcome: 'not_sent', reason: 'provider log shows nothing' };
    expect(
      (await call('POST', '/effects/resolve', ops.alice, { ...body, seen: await seenOf(t.db, e.key) })).status,
    ).toBe(403);
    expect(await call('POST', '/effects/resolve', ops.support, body)).toMatchObject({
      status: 422,
      body: { field: 'seen' },
    });
    const queue = await call('GET', '/queues/support', ops.support);
    expect(JSON.stringify(queue.body)).toContain(e.key);
    const ok = await call('POST', '/effects/resolve', ops.support, { ...body, seen: await seenOf(t.db, e.key) });
    expect(ok.status).toBe(200);
    expect(await entries('effect.resolve_not_sent', e.key)).toEqual([{ actor_id: ops.support.id, outcome: 'ok' }]);
  });

  it('bad input: invalid JSON, an unknown field, an unknown operation, the wrong method; each 4xx names the problem', async () => {
    const bad = await call('POST', '/plans/approve', ops.alice, undefined, '{"planId":');
    expect(bad).toMatchObject({ status: 422, body: { code: 'validation', field: 'body' } });
    const extra = await call('POST', '/replays/start', ops.alice, { replayId: 'nope', seenStatus: 'approved' });
    expect(extra).toMatchObject({ status: 422, body: { field: 'replayId' } });
    const unknown = await call('POST', '/tools', ops.admin, {
      name: 'Bad Name!',
      actions: 'x',
      targetType: 'email',
      provider: 'p',
      generatedInputs: '',
    });
    expect(unknown).toMatchObject({ status: 422, body: { field: 'name' } });
    expect((await call('GET', '/nothing', ops.alice)).status).toBe(404);
    expect((await call('GET', '/plans/approve', ops.alice)).status).toBe(405);
  });
});

describe('management API: forced replay', () => {
  it('request, four-eyes approve by another operator, start, pause, cancel: each with its version, each audited', async () => {
    const c = await makeCampaign(t.db, { failed: 2, done: 1 });
    const preview = await call('GET', `/runs/${c.runId}/replay`, ops.alice);
    expect(preview.status).toBe(200);
    const setHash = (preview.body as { preview: { setHash: string } }).preview.setHash;
    const blind = await call('POST', '/replays/request', ops.alice, {
      runId: c.runId,
      confirmCount: 2,
      reason: 'crashed run',
    });
    expect(blind).toMatchObject({ status: 422, body: { field: 'setHash' } });
    const requested = await call('POST', '/replays/request', ops.alice, {
      runId: c.runId,
      confirmCount: 2,
      setHash,
      reason: 'crashed run',
    });
    expect(requested).toMatchObject({ status: 200, body: { status: 'awaiting_approval', total: 2 } });
    const { replayId, approvalRequestId } = requested.body as { replayId: string; approvalRequestId: string };
    const approve = { approvalRequestId, setHash, seenStatus: 'open' };
    expect((await call('POST', '/replays/approve', ops.alice, approve)).status).toBe(403);
    expect((await call('POST', '/replays/approve', ops.bob, approve)).status).toBe(200);
    expect(await call('POST', '/replays/start', ops.alice, { replayId })).toMatchObject({
      status: 422,
      body: { field: 'seenStatus' },
    });
    expect((await call('POST', '/replays/start', ops.alice, { replayId, seenStatus: 'approved' })).status).toBe(200);
    expect((await call('POST', '/replays/pause', ops.alice, { replayId, seenStatus: 'running' })).status).toBe(200);
    const progress = await call('GET', `/replays/${replayId}/progress`, ops.auditor);
    expect(progress.status).toBe(200);
    const cancelled = await call('POST', '/replays/cancel', ops.alice, {
      replayId,
      reason: 'enough',
      seenStatus: 'paused',
    });
    expect(cancelled.status).toBe(200);
    const actions = await t.owner<{ action: string; actor_id: string }>(
      `SELECT action, actor_id FROM audit_entry WHERE subject_id = $1 AND outcome = 'ok' AND action LIKE 'replay.%' ORDER BY id`,
      [replayId],
    );
    expect(actions.rows.map((r) => r.action)).toEqual(
      expect.arrayContaining(['replay.start', 'replay.pause', 'replay.cancel']),
    );
  });
});

describe('management API: configuration (admin)', () => {
  it('tools, runtime keys, users and grants: admin only, each audited with the admin as actor', async () => {
    const tool = {
      name: `mail_${suffix()}`,
      actions: ['receipt'],
      targetType: 'email',
      provider: 'sandbox',
      generatedInputs: [],
    };
    expect((await call('POST', '/tools', ops.alice, tool)).status).toBe(403);
    expect((await call('POST', '/tools', ops.admin, tool)).status).toBe(200);
    const toolEntries = await t.owner(
      `SELECT actor_id, outcome FROM audit_entry WHERE action = 'tool.create' AND actor_id = $1`,
      [ops.admin.id],
    );
    expect(toolEntries.rows).toEqual([{ actor_id: ops.admin.id, outcome: 'ok' }]);

    const key = await call('POST', '/runtime-keys', ops.admin, { name: `ci-${suffix()}`, workflows: ['*'] });
    expect(key.status).toBe(200);
    const keyId = (key.body as { id: string }).id;
    expect(JSON.stringify(key.body)).toMatch(/elk_/);
    expect((await call('POST', '/runtime-keys/revoke', ops.admin, { keyId, reason: 'rotated' })).status).toBe(200);
    expect(await entries('runtime_key.revoke', keyId)).toEqual([{ actor_id: ops.admin.id, outcome: 'ok' }]);

    const made = await call('POST', '/users', ops.admin, {
      email: `new-${suffix()}@example.com`,
      name: 'New',
      role: 'support',
      password: 'a-long-enough-password',
    });
    expect(made.status).toBe(200);
    const userId = (made.body as { id: string }).id;
    const run = await makeRun(t.db);
    const wf = (await t.db.run.findUniqueOrThrow({ where: { id: run.runId } })).workflow;
    const granted = await call('POST', '/grants', ops.admin, {
      userId,
      role: 'operator',
      workflow: wf,
      reason: 'on call',
    });
    expect(granted.status).toBe(200);
    const grant = await t.db.roleGrant.findFirstOrThrow({ where: { userId, workflow: wf } });
    expect(
      (await call('POST', '/grants/remove', ops.admin, { grantId: grant.id, reason: 'rotation over' })).status,
    ).toBe(200);
    expect(await t.db.roleGrant.count({ where: { userId, workflow: wf } })).toBe(0);
    expect((await entries('user.ungrant', userId)).map((e) => e.actor_id)).toEqual([ops.admin.id]);
  });

  it('reads: runs, a run, its plan, the plan queue and the audit trail (whose read is itself recorded)', async () => {
    const plan = await submittedPlan();
    const runs = await call('GET', '/runs', ops.auditor);
    expect(runs.status).toBe(200);
    expect(JSON.stringify(runs.body)).toContain(plan.runId);
    expect((await call('GET', `/runs/${plan.runId}/plan`, ops.auditor)).body).toMatchObject({
      plan: { id: plan.planId },
    });
    expect(JSON.stringify((await call('GET', '/queues/plans', ops.alice)).body)).toContain(plan.planId);
    const audit = await call('GET', '/audit', ops.auditor);
    expect(audit.status).toBe(200);
    const reads = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'audit.read' AND actor_id = $1`,
      [ops.auditor.id],
    );
    expect(reads.rows[0]?.n).toBeGreaterThan(0);
  });
});
