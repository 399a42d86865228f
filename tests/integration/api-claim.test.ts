import { beforeAll, describe, expect, it } from 'vitest';
import { POST as claimPOST } from '@/app/api/v1/effects/claim/route.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot, userActor } from '../helpers/factories.ts';
import { resolveUnknown } from '@/lib/ledger/index.ts';
import { get, makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 60 });
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
  toolName = (await makeTool(t.db)).name;
});

const claimBody = (runId: string, target = 'anna@example.com', recordId = 'customer-1') => ({
  runId,
  tool: toolName,
  action: 'campaign_welcome',
  recordId,
  target,
});

describe('POST /api/v1/effects/claim', () => {
  it('S1: the winner gets 201 with exactly { claimed, key, epoch, attemptId, idempotencyKey }; a loser 200 with { claimed, key, epoch, state, changedBy, changedAt }', async () => {
    const run = await makeRun(t.db);
    const won = await claimPOST(
      new Request('http://x/api/v1/effects/claim', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify(claimBody(run.runId)),
      }),
    );
    expect(won.status).toBe(201);
    const w = await won.json();
    expect(Object.keys(w).sort()).toEqual(['attemptId', 'claimed', 'epoch', 'idempotencyKey', 'key']);
    expect(w).toMatchObject({ claimed: true, epoch: 1 });
    expect(w.key).toContain('anna%40example.com');
    const lost = await post('/effects/claim', claimBody(run.runId, '  Anna@EXAMPLE.com '), { token });
    expect(lost.status).toBe(200);
    const l = await lost.json();
    expect(Object.keys(l).sort()).toEqual(['changedAt', 'changedBy', 'claimed', 'epoch', 'key', 'state']);
    expect(l).toMatchObject({ claimed: false, key: w.key, epoch: 1, state: 'pending' });
    expect(new Date(l.changedAt).toString()).not.toBe('Invalid Date');
  });

  it('K1: fields the tool definition does not name as identity never reach the key: a body with subject is refused (422) and writes nothing', async () => {
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    const res = await post(
      '/effects/claim',
      { ...claimBody(run.runId, 'bob@example.com'), subject: 'Welcome!' },
      { token },
    );
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'validation', status: 422 });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('K3: a target with an invisible format character (U+200B, U+202E, U+00AD, U+FEFF) is refused with 422 naming target; nothing is written', async () => {
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    for (const target of [
      'an\u200bna@example.com',
      'anna@example.com\u202e',
      'an\u00adna@example.com',
      '\ufeffanna@example.com',
    ]) {
      const res = await post('/effects/claim', claimBody(run.runId, target, 'rec-cf'), { token });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const body = await res.json();
      expect(body).toMatchObject({ code: 'validation', status: 422, field: 'target' });
      expect(String(body.detail ?? body.title)).toMatch(/format character \(U\+[0-9A-F]{4}\)/);
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S1: 50 parallel HTTP claims of one key: exactly one 201, 49 200', async () => {
    const run = await makeRun(t.db);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        post('/effects/claim', claimBody(run.runId, 'parallel@example.com', 'rec-par'), { token }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    const { rows } = await t.owner<{ n: string }>("SELECT count(*) AS n FROM attempt WHERE key LIKE '%parallel%'");
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it('R1, S2: record the raw response, report done with receipt; read the run back with its state', async () => {
    const run = await makeRun(t.db);
    const w = await (await post('/effects/claim', claimBody(run.runId, 'carl@example.com', 'rec-c'), { token })).json();
    const body = Buffer.from('{"id":"msg_1","status":"delivered"}');
    const rec = await post(
      `/attempts/${w.attemptId}/response`,
      {
        status: 201,
        headers: [
          ['content-type', 'application/json'],
          ['x-a', '1'],
        ],
        bodyBase64: body.toString('base64'),
      },
      { token },
    );
    expect(rec.status).toBe(201);
    const stored = await t.db.attempt.findUniqueOrThrow({ where: { id: w.attemptId } });
    expect(Buffer.from(stored.responseBody!).equals(body)).toBe(true);
    expect(stored.responseHeaders).toEqual([
      ['content-type', 'application/json'],
      ['x-a', '1'],
    ]);
    const done = await post(
      '/effects/outcome',
      { key: w.key, epoch: w.epoch, outcome: 'done', receipt: 'msg_1', attemptId: w.attemptId },
      { token },
    );
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ key: w.key, from: 'pending', state: 'done', receipt: 'msg_1' });
    const again = await post(
      '/effects/outcome',
      { key: w.key, epoch: w.epoch, attemptId: w.attemptId, outcome: 'failed', evidence: { status: 422 } },
      { token },
    );
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('invalid_transition');
    const view = await (await get(`/runs/${run.runId}`, token)).json();
    expect(view.targets).toEqual([
      expect.objectContaining({ key: w.key, state: 'done', receipt: 'msg_1', inPlan: false }),
    ]);
    expect(view.counts.done).toBe(1);
  });

  it('V1, V2: a deletion revokes the key and returns a deterministic successor id; repeating it returns the same one', async () => {
    const run = await makeRun(t.db);
    const w = await (await post('/effects/claim', claimBody(run.runId, 'dora@example.com', 'rec-d'), { token })).json();
    await post(
      '/effects/outcome',
      { key: w.key, epoch: w.epoch, attemptId: w.attemptId, outcome: 'done', receipt: 'msg_d' },
      { token },
    );
    const deletedAt = '2026-11-30T10:00:00.000Z';
    const first = await post(
      '/effects/deletion',
      { key: w.key, epoch: w.epoch, objectId: 'post_123', deletedAt },
      { token },
    );
    expect(first.status).toBe(200);
    const a = await first.json();
    expect(a).toMatchObject({ key: w.key, state: 'revoked', objectId: 'post_123', deletedAt });
    expect(a.successorId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const second = await (
      await post('/effects/deletion', { key: w.key, epoch: w.epoch, objectId: 'post_123' }, { token })
    ).json();
    expect(second.successorId).toBe(a.successorId);
    const state = await t.db.effect.findFirstOrThrow({ where: { key: w.key } });
    expect(state.state).toBe('revoked');
  });

  it('V2: the same deletion reported several times at once is recorded once; every report gets the one successor id', async () => {
    for (let round = 0; round < 5; round++) {
      const run = await makeRun(t.db);
      const w = await (
        await post('/effects/claim', claimBody(run.runId, `same${round}@example.com`, `rec-s${round}`), { token })
      ).json();
      await post(
        '/effects/outcome',
        { key: w.key, epoch: w.epoch, attemptId: w.attemptId, outcome: 'done', receipt: `msg_s${round}` },
        { token },
      );
      const report = { key: w.key, epoch: w.epoch, objectId: `post_s${round}`, deletedAt: '2026-11-30T10:00:00Z' };
      const answers = await Promise.all(Array.from({ length: 4 }, () => post('/effects/deletion', report, { token })));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      const bodies = await Promise.all(answers.map((a) => a.json()));
      expect(new Set(bodies.map((b: { successorId: string }) => b.successorId)).size).toBe(1);
      const revocations = await t.db.effectTransition.count({ where: { key: w.key, toState: 'revoked' } });
      expect(revocations).toBe(1);
    }
  });

  it('V1 A4: a deletion names the epoch that produced the object; an epoch still awaiting its claim produced nothing and is not revoked (refused, audited)', async () => {
    const run = await makeRun(t.db);
    const w = await (await post('/effects/claim', claimBody(run.runId, 'eve@example.com', 'rec-e'), { token })).json();
    await post(
      '/effects/outcome',
      { key: w.key, epoch: w.epoch, attemptId: w.attemptId, outcome: 'unknown', evidence: { why: 'timeout' } },
      { token },
    );
    // Support finds it was never sent: the epoch waits for a new claim.
    await resolveUnknown(
      { db: t.db, actor: userActor('support') },
      { key: w.key, epoch: w.epoch, outcome: 'not_sent', reason: 'provider log shows nothing' },
    );
    const before = await snapshot(t.db);
    const noEpoch = await post('/effects/deletion', { key: w.key, objectId: 'post_9' }, { token });
    expect(noEpoch.status).toBe(422);
    expect(await noEpoch.json()).toMatchObject({ field: 'epoch' });
    const awaiting = await post('/effects/deletion', { key: w.key, epoch: w.epoch, objectId: 'post_9' }, { token });
    expect(awaiting.status).toBe(409);
    expect(await awaiting.json()).toMatchObject({ field: 'epoch', detail: expect.stringMatching(/never claimed/) });
    expect(await snapshot(t.db)).toEqual(before);
    // A4: the refusal is on the key's refused chain.
    const refused = await t.db.auditEntry.findMany({
      where: { chain: `refused:effect:${w.key}`, action: 'effect.revoke_deletion', outcome: 'refused' },
    });
    expect(refused.map((e) => (e.detail as { why: string }).why)).toEqual([expect.stringMatching(/never claimed/)]);
  });
});
