// Idempotency-Key records created in batches (lib/api/idempotency-insert.ts), and replayed claims of
// held keys answered from one read and stored with their record in one insert (lib/api/idempotent-post.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { insertRecord } from '@/lib/api/idempotency-insert.ts';
import { requestHash, STALE_SECONDS } from '@/lib/api/idempotency.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot, suffix } from '../helpers/factories.ts';
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
const record = async (idempotencyKey: string) =>
  (
    await t.owner<{ response_status: number | null; xmin: string }>(
      `SELECT response_status, xmin::text FROM idempotency_record WHERE scope = $1 AND key = $2`,
      [`runtime:${key.id}`, idempotencyKey],
    )
  ).rows[0];

describe('Idempotency-Key records in batches (Z5)', () => {
  it('Z5: inserts started together share one statement; the same key twice behaves as two requests in a row (the first takes it)', async () => {
    const scope = `test:${suffix()}`;
    const item = (k: string, status: number | null) => ({
      scope,
      key: k,
      hash: `h-${k}`,
      answer: status === null ? null : { status, body: JSON.stringify({ k }) },
    });
    const ids = await Promise.all([
      insertRecord(t.db, item('a', null)),
      insertRecord(t.db, { ...item('a', 200), hash: 'second' }),
      insertRecord(t.db, item('b', 200)),
      insertRecord(t.db, item('c', null)),
    ]);
    expect(ids[0]).not.toBeNull();
    expect(ids[1]).toBeNull();
    expect(ids[2]).not.toBeNull();
    expect(ids[3]).not.toBeNull();
    const rows = await t.owner<{ key: string; request_hash: string; response_status: number | null; xmin: string }>(
      `SELECT key, request_hash, response_status, xmin::text FROM idempotency_record WHERE scope = $1 ORDER BY key`,
      [scope],
    );
    expect(rows.rows.map((r) => [r.key, r.request_hash, r.response_status])).toEqual([
      ['a', 'h-a', null],
      ['b', 'h-b', 200],
      ['c', 'h-c', null],
    ]);
    expect(new Set(rows.rows.map((r) => r.xmin)).size).toBe(1);
  });

  it('Z5: a batch where one insert is refused by the database: the others are still stored, and only that one fails', async () => {
    const scope = `test:${suffix()}`;
    const results = await Promise.allSettled([
      insertRecord(t.db, { scope, key: 'ok-1', hash: 'h1', answer: null }),
      // PostgreSQL text cannot hold NUL: this row breaks the whole statement.
      insertRecord(t.db, { scope, key: 'bad\u0000', hash: 'h2', answer: null }),
      insertRecord(t.db, { scope, key: 'ok-2', hash: 'h3', answer: { status: 200, body: '{}' } }),
      insertRecord(t.db, { scope, key: 'ok-3', hash: 'h4', answer: null }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const rows = await t.owner<{ key: string }>(`SELECT key FROM idempotency_record WHERE scope = $1 ORDER BY key`, [
      scope,
    ]);
    expect(rows.rows.map((r) => r.key)).toEqual(['ok-1', 'ok-2', 'ok-3']);
  });
});

describe('replayed claims answered from one read (Z5)', () => {
  it('Z5: a claim of a held key is stored as answered; its retry replays that first answer even after the key changed; another body is 422', async () => {
    const run = await makeRun(t.db);
    const b = body(run.runId, `held-${suffix()}@example.com`);
    const won = await post('/effects/claim', b, { token: key.token, idempotencyKey: `won-${suffix()}` });
    expect(won.status).toBe(201);
    const claim = await won.json();
    const skipKey = `skip-${suffix()}`;
    const skipped = await post('/effects/claim', b, { token: key.token, idempotencyKey: skipKey });
    expect(skipped.status).toBe(200);
    expect(skipped.headers.get('idempotent-replayed')).toBeNull();
    const first = await skipped.json();
    expect(first).toMatchObject({ claimed: false, key: claim.key, epoch: 1, state: 'pending' });
    expect((await record(skipKey))?.response_status).toBe(200);
    // The key moves on (its claimer reports done); the retry still gets the first answer.
    const done = await post(
      '/effects/outcome',
      { key: claim.key, epoch: 1, attemptId: claim.attemptId, outcome: 'done', receipt: 'msg-1' },
      { token: key.token, idempotencyKey: `done-${suffix()}` },
    );
    expect(done.status).toBe(200);
    const retry = await post('/effects/claim', b, { token: key.token, idempotencyKey: skipKey });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(first);
    const before = await snapshot(t.db);
    const other = await post('/effects/claim', body(run.runId, 'someone-else@example.com'), {
      token: key.token,
      idempotencyKey: skipKey,
    });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ field: 'Idempotency-Key' });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('Z5: a held key whose Idempotency-Key record is still in progress gets 409; once that record is stale, the retry takes it over and stores its answer', async () => {
    const run = await makeRun(t.db);
    const b = body(run.runId, `busy-${suffix()}@example.com`);
    expect((await post('/effects/claim', b, { token: key.token })).status).toBe(201);
    const k = `busy-${suffix()}`;
    await t.owner(`INSERT INTO idempotency_record (scope, key, request_hash) VALUES ($1, $2, $3)`, [
      `runtime:${key.id}`,
      k,
      requestHash('POST', '/api/v1/effects/claim', b),
    ]);
    const dup = await post('/effects/claim', b, { token: key.token, idempotencyKey: k });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toMatchObject({ idempotency: 'in_progress' });
    // Come back soon with the same key (the SDKs keep asking while it says so).
    expect(dup.headers.get('retry-after')).toBe('1');
    await t.owner(`UPDATE idempotency_record SET created_at = now() - make_interval(secs => $1) WHERE key = $2`, [
      STALE_SECONDS + 1,
      k,
    ]);
    const takeover = await post('/effects/claim', b, { token: key.token, idempotencyKey: k });
    expect(takeover.status).toBe(200);
    expect((await record(k))?.response_status).toBe(200);
  });

  it('Z5: 20 concurrent replays of one held key, each with its own Idempotency-Key, and 20 with one shared key: all skip, nothing is claimed again', async () => {
    const run = await makeRun(t.db);
    const b = body(run.runId, `many-${suffix()}@example.com`);
    expect((await post('/effects/claim', b, { token: key.token })).status).toBe(201);
    const shared = `shared-${suffix()}`;
    const responses = await Promise.all([
      ...Array.from({ length: 20 }, (_, i) =>
        post('/effects/claim', b, { token: key.token, idempotencyKey: `own-${i}-${shared}` }),
      ),
      ...Array.from({ length: 20 }, () => post('/effects/claim', b, { token: key.token, idempotencyKey: shared })),
    ]);
    for (const r of responses) expect(r.status).toBe(200);
    const sharedAnswers = responses.slice(20);
    expect(sharedAnswers.filter((r) => !r.headers.get('idempotent-replayed'))).toHaveLength(1);
    const bodies = await Promise.all(sharedAnswers.map((r) => r.json()));
    for (const x of bodies) expect(x).toEqual(bodies[0]);
    const attempts = await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM attempt a JOIN effect_key k ON k.key = a.key WHERE k.target = $1`,
      [b.target],
    );
    expect(Number(attempts.rows[0]!.n)).toBe(1);
  });

  it('Z5, Z6: a held key claimed with an Idempotency-Key by a key of another workflow is 403, audited once; a bad bearer is 401 and learns nothing', async () => {
    const run = await makeRun(t.db);
    const b = body(run.runId, `scoped-${suffix()}@example.com`);
    expect((await post('/effects/claim', b, { token: key.token })).status).toBe(201);
    const outsider = await makeKey(t.db, ['wf_somewhere_else']);
    const refusals = async () =>
      Number(
        (
          await t.owner<{ n: string }>(
            `SELECT count(*) AS n FROM audit_entry WHERE outcome = 'refused' AND chain = $1 AND actor_id = $2`,
            [`refused:run:${run.runId}`, outsider.id],
          )
        ).rows[0]!.n,
      );
    const k = `outsider-${suffix()}`;
    const refused = await post('/effects/claim', b, { token: outsider.token, idempotencyKey: k });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'forbidden' });
    expect(await refusals()).toBe(1);
    const anonymous = await post('/effects/claim', b, { token: 'elk_nosuchkey_secret', idempotencyKey: k });
    expect(anonymous.status).toBe(401);
    expect(JSON.stringify(await anonymous.json())).not.toContain('pending');
  });
});
