import { beforeAll, describe, expect, it } from 'vitest';
import { requestHash, STALE_SECONDS } from '@/lib/api/idempotency.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let key: Awaited<ReturnType<typeof makeKey>>;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  key = await makeKey(t.db);
  toolName = (await makeTool(t.db)).name;
});

const body = (runId: string, target: string) => ({
  runId,
  tool: toolName,
  action: 'campaign_welcome',
  recordId: `rec-${target}`,
  target,
});
const attempts = async (target: string) =>
  Number(
    (
      await t.owner<{ n: string }>(
        `SELECT count(*) AS n FROM attempt a JOIN effect_key k ON k.key = a.key WHERE k.target = $1`,
        [target],
      )
    ).rows[0]!.n,
  );

describe('Idempotency-Key on every POST (Z5)', () => {
  it('Z5: a retried claim returns the first response (201, same attemptId) and claims nothing more', async () => {
    const run = await makeRun(t.db);
    const first = await post('/effects/claim', body(run.runId, 'anna@example.com'), {
      token: key.token,
      idempotencyKey: 'claim-anna-1',
    });
    const a = await first.json();
    const retry = await post('/effects/claim', body(run.runId, 'anna@example.com'), {
      token: key.token,
      idempotencyKey: 'claim-anna-1',
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(a);
    expect(await attempts('anna@example.com')).toBe(1);
  });

  it('Z5: answers stored together (completions made at the same moment share one statement) are each replayed exactly', async () => {
    const run = await makeRun(t.db);
    const targets = Array.from({ length: 24 }, (_, i) => `batch-${i}@example.com`);
    const send = (target: string) =>
      post('/effects/claim', body(run.runId, target), { token: key.token, idempotencyKey: `batch-${target}` });
    const firsts = await Promise.all(targets.map(async (target) => (await send(target)).json()));
    const stored = await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM idempotency_record WHERE key LIKE 'batch-%' AND response_status = 201`,
    );
    expect(Number(stored.rows[0]!.n)).toBe(targets.length);
    const retries = await Promise.all(targets.map(send));
    for (const [i, retry] of retries.entries()) {
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await retry.json()).toEqual(firsts[i]);
    }
    for (const target of targets) expect(await attempts(target)).toBe(1);
  });

  it('Z5: the same key with a different body (or path) is refused with 422 naming Idempotency-Key, and nothing changes', async () => {
    const run = await makeRun(t.db);
    expect(
      (await post('/effects/claim', body(run.runId, 'ben@example.com'), { token: key.token, idempotencyKey: 'k-ben' }))
        .status,
    ).toBe(201);
    const before = await snapshot(t.db);
    const other = await post('/effects/claim', body(run.runId, 'other@example.com'), {
      token: key.token,
      idempotencyKey: 'k-ben',
    });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: 'validation', field: 'Idempotency-Key' });
    const path = await post('/runs', { workflow: 'wf', triggerId: 'x' }, { token: key.token, idempotencyKey: 'k-ben' });
    expect(path.status).toBe(422);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('Z5: a duplicate arriving while the first is still in progress gets 409; after the first died (stale) a retry takes over', async () => {
    const run = await makeRun(t.db);
    const b = body(run.runId, 'cleo@example.com');
    const hash = requestHash('POST', '/api/v1/effects/claim', b);
    await t.owner(`INSERT INTO idempotency_record (scope, key, request_hash) VALUES ($1, 'k-cleo', $2)`, [
      `runtime:${key.id}`,
      hash,
    ]);
    const dup = await post('/effects/claim', b, { token: key.token, idempotencyKey: 'k-cleo' });
    expect(dup.status).toBe(409);
    expect((await dup.json()).code).toBe('conflict');
    expect(await attempts('cleo@example.com')).toBe(0);
    await t.owner(`UPDATE idempotency_record SET created_at = now() - make_interval(secs => $1) WHERE key = 'k-cleo'`, [
      STALE_SECONDS + 1,
    ]);
    const takeover = await post('/effects/claim', b, { token: key.token, idempotencyKey: 'k-cleo' });
    expect(takeover.status).toBe(201);
  });

  it('Z5: 20 concurrent identical requests with one key: the operation runs once; the others get 409 or the stored first response', async () => {
    const run = await makeRun(t.db);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        post('/effects/claim', body(run.runId, 'dan@example.com'), { token: key.token, idempotencyKey: 'k-dan' }),
      ),
    );
    const original = responses.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed'));
    expect(original).toHaveLength(1);
    for (const r of responses) expect([201, 409]).toContain(r.status);
    expect(await attempts('dan@example.com')).toBe(1);
  });

  it('Z5: keys are scoped per runtime key; a malformed Idempotency-Key is 422', async () => {
    const run = await makeRun(t.db);
    const other = await makeKey(t.db);
    expect(
      (await post('/effects/claim', body(run.runId, 'eve@example.com'), { token: key.token, idempotencyKey: 'shared' }))
        .status,
    ).toBe(201);
    const second = await post('/effects/claim', body(run.runId, 'eve@example.com'), {
      token: other.token,
      idempotencyKey: 'shared',
    });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const bad = await post('/effects/claim', body(run.runId, 'eve@example.com'), {
      token: key.token,
      idempotencyKey: 'has space',
    });
    expect(bad.status).toBe(422);
    expect((await bad.json()).field).toBe('Idempotency-Key');
  });
});
