// An outcome report with an Idempotency-Key runs in one statement (lib/api/outcome-statement.ts, SQL
// api_report_outcome) and keeps every guarantee of the usual way: its answer stored with its record
// and replayed identically (Z5), exactly one of two concurrent duplicates runs, a revoked key or one
// out of the effect's workflow is refused (401, 403, audited) with the ledger unchanged, and a refused transition
// is answered 409 and that answer stored.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  toolName = (await makeTool(t.db)).name;
});

async function claimed(token: string, workflow?: string) {
  const run = await makeRun(t.db, workflow);
  const target = `u${Math.random().toString(36).slice(2, 8)}@example.com`;
  const res = await post(
    '/effects/claim',
    { runId: run.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r-1', target },
    { token, idempotencyKey: `claim-${target}` },
  );
  expect(res.status).toBe(201);
  return (await res.json()) as { key: string; epoch: number; attemptId: string };
}

const done = (c: { key: string; epoch: number; attemptId: string }, receipt = 'msg_1') => ({
  key: c.key,
  epoch: c.epoch,
  outcome: 'done',
  receipt,
  attemptId: c.attemptId,
  response: { status: 201, headers: [['content-type', 'application/json']], bodyBase64: 'e30=' },
});

async function record(idempotencyKey: string) {
  const { rows } = await t.owner<{ response_status: number | null; response_body: unknown }>(
    'SELECT response_status, response_body FROM idempotency_record WHERE key = $1',
    [idempotencyKey],
  );
  return rows;
}

async function transitions(key: string) {
  const { rows } = await t.owner<{ to_state: string }>(
    'SELECT to_state FROM effect_transition WHERE key = $1 ORDER BY id',
    [key],
  );
  return rows.map((r) => r.to_state);
}

describe('an outcome report in one statement', () => {
  it('Z5: the answer is stored with its record and a retry gets it identically; another body is 422', async () => {
    const { token } = await makeKey(t.db);
    const c = await claimed(token);
    const first = await post('/effects/outcome', done(c), { token, idempotencyKey: `out-${c.key}` });
    expect(first.status).toBe(200);
    const body = await first.json();
    expect(body).toMatchObject({ key: c.key, from: 'pending', state: 'done', receipt: 'msg_1' });
    expect(await record(`out-${c.key}`)).toEqual([{ response_status: 200, response_body: body }]);
    const again = await post('/effects/outcome', done(c), { token, idempotencyKey: `out-${c.key}` });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(body);
    const other = await post('/effects/outcome', done(c, 'msg_2'), { token, idempotencyKey: `out-${c.key}` });
    expect(other.status).toBe(422);
    expect(await transitions(c.key)).toEqual(['pending', 'done']);
  });

  it('Z5: of two concurrent duplicates exactly one runs; the other is replayed or told to retry', async () => {
    const { token } = await makeKey(t.db);
    const c = await claimed(token);
    const answers = await Promise.all(
      [1, 2].map(() => post('/effects/outcome', done(c), { token, idempotencyKey: `dup-${c.key}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect([
      [200, 200],
      [200, 409],
    ]).toContainEqual(statuses);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') !== 'true' && a.status === 200)).toHaveLength(1);
    expect(await transitions(c.key)).toEqual(['pending', 'done']);
    const { rows } = await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM audit_entry WHERE subject_id = $1 AND outcome = 'refused'`,
      [c.key],
    );
    expect(Number(rows[0]!.n)).toBe(0);
  });

  it('Z6: a key out of the effect workflow is refused 403 and audited, the ledger unchanged', async () => {
    const owner = await makeKey(t.db);
    const c = await claimed(owner.token, 'wf_owned');
    const stranger = await makeKey(t.db, ['wf_other']);
    const before = await snapshot(t.db);
    const res = await post('/effects/outcome', done(c), { token: stranger.token, idempotencyKey: `far-${c.key}` });
    expect(res.status).toBe(403);
    expect(await snapshot(t.db)).toEqual(before);
    // Decided the usual way: the refusal is the record's answer, as for any 403.
    expect(await record(`far-${c.key}`)).toEqual([{ response_status: 403, response_body: await res.json() }]);
    const { rows } = await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM audit_entry WHERE subject_id = $1 AND outcome = 'refused'`,
      [c.key],
    );
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it('Z4: a revoked key is refused 401 with nothing written', async () => {
    const key = await makeKey(t.db);
    const c = await claimed(key.token);
    await t.owner('UPDATE runtime_key SET revoked_at = now() WHERE name = $1', [key.name]);
    const before = await snapshot(t.db);
    const res = await post('/effects/outcome', done(c), { token: key.token, idempotencyKey: `rev-${c.key}` });
    expect(res.status).toBe(401);
    expect(await snapshot(t.db)).toEqual(before);
    expect(await record(`rev-${c.key}`)).toEqual([]);
  });

  it('a refused transition is answered 409 and that answer is what a retry gets', async () => {
    const { token } = await makeKey(t.db);
    const c = await claimed(token);
    expect((await post('/effects/outcome', done(c), { token, idempotencyKey: `a-${c.key}` })).status).toBe(200);
    const refused = await post('/effects/outcome', done(c), { token, idempotencyKey: `b-${c.key}` });
    expect(refused.status).toBe(409);
    const body = await refused.json();
    expect(await record(`b-${c.key}`)).toEqual([{ response_status: 409, response_body: body }]);
    const retry = await post('/effects/outcome', done(c), { token, idempotencyKey: `b-${c.key}` });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toEqual(body);
  });
});
