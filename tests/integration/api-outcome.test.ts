// POST /api/v1/effects/outcome with the attempt's raw response: one round trip and one transaction
// for the evidence (R1) and the outcome (S2, S3), refused cleanly when the response does not belong.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
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

async function claim(target: string) {
  const run = await makeRun(t.db);
  const res = await post(
    '/effects/claim',
    { runId: run.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r-1', target },
    { token },
  );
  expect(res.status).toBe(201);
  return (await res.json()) as { key: string; epoch: number; attemptId: string };
}

const raw = (status: number, text: string) => ({
  status,
  headers: [
    ['content-type', 'application/json'],
    ['x-request-id', 'prov-1'],
  ],
  bodyBase64: Buffer.from(text).toString('base64'),
});

async function attemptRow(attemptId: string) {
  const { rows } = await t.owner<{ response_status: number | null; response_body: Buffer | null; headers: unknown }>(
    'SELECT response_status, response_body, response_headers AS headers FROM attempt WHERE id = $1',
    [attemptId],
  );
  return rows[0]!;
}

describe('POST /api/v1/effects/outcome carrying the raw response', () => {
  it('R1 S2: done with its receipt and the raw response in one request: both are stored, bytes exact', async () => {
    const c = await claim('ada@example.com');
    const body = '{"id":"msg_1","note":"caf\u00e9"}';
    const res = await post(
      '/effects/outcome',
      {
        key: c.key,
        epoch: c.epoch,
        outcome: 'done',
        receipt: 'msg_1',
        attemptId: c.attemptId,
        response: raw(202, body),
      },
      { token },
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ state: 'done', receipt: 'msg_1' });
    const row = await attemptRow(c.attemptId);
    expect(row.response_status).toBe(202);
    expect(Buffer.from(row.response_body!).toString('utf8')).toBe(body);
    expect(row.headers).toEqual([
      ['content-type', 'application/json'],
      ['x-request-id', 'prov-1'],
    ]);
  });

  it('R1 S3: a rejection keeps its raw response; a second report for the same attempt is refused and changes nothing', async () => {
    const c = await claim('bea@example.com');
    const first = await post(
      '/effects/outcome',
      {
        key: c.key,
        outcome: 'failed',
        attemptId: c.attemptId,
        evidence: { status: 550 },
        response: raw(550, 'mailbox unavailable'),
      },
      { token },
    );
    expect(first.status).toBe(200);
    const before = await snapshot(t.db);
    const again = await post(
      '/effects/outcome',
      { key: c.key, outcome: 'done', receipt: 'x', attemptId: c.attemptId, response: raw(200, 'other') },
      { token },
    );
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'invalid_transition' });
    expect(Buffer.from((await attemptRow(c.attemptId)).response_body!).toString()).toBe('mailbox unavailable');
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('R1: a response needs the attemptId of its claim (422 naming it); non-canonical base64 names response.bodyBase64; nothing is written', async () => {
    const c = await claim('cy@example.com');
    const before = await snapshot(t.db);
    const noAttempt = await post(
      '/effects/outcome',
      { key: c.key, outcome: 'done', receipt: 'm', response: raw(200, 'ok') },
      { token },
    );
    expect(noAttempt.status).toBe(422);
    expect(await noAttempt.json()).toMatchObject({ field: 'attemptId' });
    const badBase64 = await post(
      '/effects/outcome',
      {
        key: c.key,
        outcome: 'done',
        receipt: 'm',
        attemptId: c.attemptId,
        response: { status: 200, headers: [], bodyBase64: 'QQ=x' },
      },
      { token },
    );
    expect(badBase64.status).toBe(422);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S3: every outcome names its claim: a report of done, failed, unknown or stuck without attemptId is 422 naming it, and nothing moves', async () => {
    const c = await claim('stale@example.com');
    const before = await snapshot(t.db);
    const reports = [
      { outcome: 'done', receipt: 'm' },
      { outcome: 'failed', evidence: { status: 550 } },
      { outcome: 'unknown', evidence: { why: 'timeout' } },
      { outcome: 'stuck', evidence: { why: 'token lost' } },
    ];
    for (const r of reports) {
      const res = await post('/effects/outcome', { key: c.key, epoch: c.epoch, ...r }, { token });
      expect(res.status, r.outcome).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'validation', field: 'attemptId' });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('Z6 R1: an attemptId of another key (even of a workflow the runtime key cannot reach) is refused, 422 naming it; neither attempt nor effect changes', async () => {
    // The other workflow's claim, made with a key of its own.
    const theirs = await claim('eve@example.com');
    const run = await makeRun(t.db);
    const scoped = (await makeKey(t.db, [run.workflow])).token;
    const mineRes = await post(
      '/effects/claim',
      { runId: run.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r-1', target: 'fay@example.com' },
      { token: scoped },
    );
    const mine = (await mineRes.json()) as { key: string; epoch: number; attemptId: string };
    const before = await snapshot(t.db);
    for (const key of [mine.key, 'v1/no-such-key']) {
      const res = await post(
        '/effects/outcome',
        { key, outcome: 'unknown', attemptId: theirs.attemptId, response: raw(200, '{"forged":true}') },
        { token: scoped },
      );
      expect(res.status, key).toBeGreaterThanOrEqual(400);
      expect(res.status, key).toBeLessThan(500);
    }
    const sameWorkflow = await post(
      '/effects/outcome',
      { key: mine.key, outcome: 'done', receipt: 'm-1', attemptId: theirs.attemptId, response: raw(200, 'x') },
      { token },
    );
    expect(sameWorkflow.status).toBe(422);
    expect(await sameWorkflow.json()).toMatchObject({ field: 'attemptId' });
    expect(await snapshot(t.db)).toEqual(before);
    expect((await attemptRow(theirs.attemptId)).response_status).toBeNull();
  });

  it('S1 S3: a late report of an earlier claim (its first try committed, then the key was claimed again) does not move the claim that holds the key now', async () => {
    const first = await claim('hal@example.com');
    const failed = await post(
      '/effects/outcome',
      {
        key: first.key,
        epoch: first.epoch,
        outcome: 'failed',
        evidence: { error: 'mailbox unavailable' },
        attemptId: first.attemptId,
        response: raw(550, 'mailbox unavailable'),
      },
      { token },
    );
    expect(failed.status).toBe(200);
    // The key is claimed again at the same epoch: a new attempt holds it.
    const run = (await t.db.effectKey.findUniqueOrThrow({ where: { key: first.key } })).runId;
    const again = await post(
      '/effects/claim',
      { runId: run, tool: toolName, action: 'campaign_welcome', recordId: 'r-1', target: 'hal@example.com' },
      { token },
    );
    expect(again.status).toBe(201);
    const second = (await again.json()) as { key: string; epoch: number; attemptId: string };
    expect(second).toMatchObject({ key: first.key, epoch: first.epoch });
    expect(second.attemptId).not.toBe(first.attemptId);

    const before = await snapshot(t.db);
    const late = await post(
      '/effects/outcome',
      {
        key: first.key,
        epoch: first.epoch,
        outcome: 'failed',
        evidence: { error: 'late' },
        attemptId: first.attemptId,
      },
      { token },
    );
    expect(late.status).toBe(409);
    expect((await late.json()).detail).toContain('newer claim');
    expect(await snapshot(t.db)).toEqual(before);
    const done = await post(
      '/effects/outcome',
      { key: second.key, epoch: second.epoch, outcome: 'done', receipt: 'm-3', attemptId: second.attemptId },
      { token },
    );
    expect(await done.json()).toMatchObject({ state: 'done' });
  });

  it('Z5: an epoch past the database integer, and a deletion time outside years 1 to 9999 once its offset applies, are 422 naming the field; nothing changes', async () => {
    const c = await claim('gus@example.com');
    await post('/effects/outcome', { key: c.key, outcome: 'done', receipt: 'm-2' }, { token });
    const before = await snapshot(t.db);
    const cases: [string, Record<string, unknown>, string][] = [
      ['/effects/outcome', { key: c.key, epoch: 2_147_483_648, outcome: 'unknown' }, 'epoch'],
      ['/effects/deletion', { key: c.key, epoch: 2_147_483_648, objectId: 'o1' }, 'epoch'],
      [
        '/effects/deletion',
        { key: c.key, epoch: c.epoch, objectId: 'o1', deletedAt: '9999-12-31T23:59:59-23:59' },
        'deletedAt',
      ],
      [
        '/effects/deletion',
        { key: c.key, epoch: c.epoch, objectId: 'o1', deletedAt: '0000-01-01T00:00:00+00:01' },
        'deletedAt',
      ],
    ];
    for (const [path, body, field] of cases) {
      const res = await post(path, body, { token });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(await res.json()).toMatchObject({ field });
    }
    expect(await snapshot(t.db)).toEqual(before);
  });
});

describe('the outcome answer stored with its Idempotency-Key record', () => {
  const record = async (key: string) =>
    (
      await t.owner<{ response_status: number | null; response_body: unknown; completed_at: Date | null }>(
        'SELECT response_status, response_body, completed_at FROM idempotency_record WHERE key = $1',
        [key],
      )
    ).rows[0]!;

  it('Z5, A1: an accepted report stores its answer in the transaction of the transition; a retry gets it, a refusal is stored too', async () => {
    const c = await claim('grace@example.com');
    const report = {
      key: c.key,
      epoch: c.epoch,
      outcome: 'done',
      receipt: 'msg_7',
      attemptId: c.attemptId,
      response: raw(202, '{"id":"msg_7"}'),
    };
    const k = `k-outcome-${c.key.slice(0, 8)}`;
    const res = await post('/effects/outcome', report, { token, idempotencyKey: k });
    expect(res.status).toBe(200);
    const answer = await res.json();
    const stored = await record(k);
    expect(stored).toMatchObject({ response_status: 200, response_body: answer });
    // One transaction: the record was completed at the transition's own time (now() is per transaction).
    const { rows } = await t.owner<{ at: Date }>(
      `SELECT at FROM effect_transition WHERE key = $1 AND to_state = 'done'`,
      [c.key],
    );
    expect(stored.completed_at!.getTime()).toBe(rows[0]!.at.getTime());
    const retry = await post('/effects/outcome', report, { token, idempotencyKey: k });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(answer);
    // A refused report (the effect is done already) is answered and stored the usual way.
    const k2 = `${k}-again`;
    const refused = await post('/effects/outcome', { ...report, receipt: 'msg_8' }, { token, idempotencyKey: k2 });
    expect(refused.status).toBe(409);
    expect(await record(k2)).toMatchObject({ response_status: 409, response_body: await refused.json() });
  });
});
