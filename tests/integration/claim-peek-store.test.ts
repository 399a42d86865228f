// A replayed claim in one statement (SQL ledger_claim_peek_store, lib/api/held-claim.ts): the runtime
// key's row, the claim key's held row and, only when the key is good and scoped, the Idempotency-Key
// record: stored with the losing claim's answer (exactly the answer the API gives) when the claim key
// is held, reserved without an answer when it is not (the claim runs under it).
// Through the API, a wrong, revoked or out-of-scope key is refused exactly as by the usual path.
import { beforeAll, describe, expect, it } from 'vitest';
import { readHeldClaim } from '@/lib/api/held-claim.ts';
import { idempotentPost } from '@/lib/api/idempotent-post.ts';
import { hashToken, revokeRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { claimEffect } from '@/lib/ledger/index.ts';
import { jsonSafe } from '@/lib/api/problem.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, runtimeActor, suffix, userActor } from '../helpers/factories.ts';
import { BASE, makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 16 });
  useApiDb(t.db);
  toolName = (await makeTool(t.db)).name;
});

type Key = Awaited<ReturnType<typeof makeKey>>;
const prefixOf = (token: string) => /^elk_([^_]+)_/.exec(token)![1]!;
const records = async (scope: string) =>
  (
    await t.owner<{ key: string; response_status: number | null; response_body: unknown }>(
      `SELECT key, response_status, response_body FROM idempotency_record WHERE scope = $1 ORDER BY key`,
      [scope],
    )
  ).rows;
const request = (key: Key, workflow: string, claimKey: string, idempotencyKey: string, token = key.token) => ({
  prefix: prefixOf(token),
  secretHash: hashToken(token),
  workflow,
  claimKey,
  idempotencyKey,
  requestHash: `hash-${idempotencyKey}`,
});

describe('ledger_claim_peek_store (a replayed claim in one statement)', () => {
  it('Z5, Z6: stores the losing answer for a good, scoped key and a held claim key, reserves the record for a claim key not held; the same Idempotency-Key twice stores once, the first in one statement', async () => {
    const run = await makeRun(t.db);
    const workflow = (await t.owner<{ workflow: string }>(`SELECT workflow FROM run WHERE id = $1`, [run.runId]))
      .rows[0]!.workflow;
    const held = await makeEffect(t.db, 'done', { tool: toolName, runId: run.runId });
    const fresh = `fresh-${suffix()}`;
    const scoped = await makeKey(t.db, [workflow]);
    const everywhere = await makeKey(t.db, ['*']);
    const outsider = await makeKey(t.db, ['wf_elsewhere']);
    const revoked = await makeKey(t.db, [workflow]);
    await revokeRuntimeKey({ db: t.db, actor: userActor('admin') }, revoked.id, 'leaked');
    const wrongSecret = scoped.token.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    // Started in the same turn: one statement for all of them (lib/db/group-commit.ts).
    const answers = await Promise.all([
      readHeldClaim(t.db, request(scoped, workflow, held.key, 'k-good')),
      readHeldClaim(t.db, request(everywhere, workflow, held.key, 'k-star')),
      readHeldClaim(t.db, request(scoped, workflow, held.key, 'k-wrong', wrongSecret)),
      readHeldClaim(t.db, request(revoked, workflow, held.key, 'k-revoked')),
      readHeldClaim(t.db, request(outsider, workflow, held.key, 'k-outside')),
      readHeldClaim(t.db, request(scoped, workflow, fresh, 'k-fresh')),
      readHeldClaim(t.db, request(scoped, workflow, held.key, 'k-good')),
      readHeldClaim(t.db, { ...request(scoped, workflow, held.key, 'k-none'), prefix: 'nosuchprefix' }),
    ]);
    const [good, star, wrong, gone, outside, notHeld, again, unknown] = answers;
    const loser = await claimEffect({ db: t.db, actor: runtimeActor() }, held.input);
    expect(loser.claimed).toBe(false);
    if (loser.claimed) return;
    const { key, epoch, state, changedBy, changedAt } = loser;
    const answer = jsonSafe({ claimed: false, key, epoch, state, changedBy, changedAt });
    // The same Idempotency-Key twice: the calls may go out in two statements side by side, so either
    // may take the key; exactly one does.
    const takers = [good!, again!].filter((a) => a.stored !== null);
    expect(takers).toHaveLength(1);
    expect(takers[0]!.stored?.body).toEqual(answer);
    expect(good!.held).toMatchObject({ epoch, state: 'done', changed_by: changedBy, changed_at: changedAt });
    expect(good!.keyRow?.id).toBe(scoped.id);
    expect(star!.stored?.body).toEqual(answer);
    for (const refused of [wrong, gone, outside]) {
      expect(refused!.stored).toBeNull();
      // The key's row still comes back: the application refuses from it (401 or 403, audited).
      expect(refused!.keyRow).toBeDefined();
    }
    expect(gone!.keyRow!.revoked_at).not.toBeNull();
    expect(notHeld!.held).toBeUndefined();
    expect(notHeld!.stored).toMatchObject({ body: null });
    expect(unknown!.keyRow).toBeUndefined();
    expect(unknown!.stored).toBeNull();
    expect((await records(`runtime:${scoped.id}`)).map((r) => [r.key, r.response_status, r.response_body])).toEqual([
      ['k-fresh', null, null],
      ['k-good', 200, answer],
    ]);
    for (const k of [revoked, outsider]) expect(await records(`runtime:${k.id}`)).toEqual([]);
    // Within one statement, the first in argument order takes the key and the second finds it taken.
    const twice = await t.owner<{ ord: number; record_id: string | null }>(
      `SELECT ord, record_id FROM ledger_claim_peek_store($1, $2, $3, $4, $5, $6, 'runtime:') ORDER BY ord`,
      [
        [prefixOf(scoped.token), prefixOf(scoped.token)],
        [hashToken(scoped.token), hashToken(scoped.token)],
        [workflow, workflow],
        [held.key, held.key],
        ['k-twice', 'k-twice'],
        ['h1', 'h2'],
      ],
    );
    expect(twice.rows.map((r) => [r.ord, r.record_id !== null])).toEqual([
      [1, true],
      [2, false],
    ]);
    const [stored] = (await records(`runtime:${scoped.id}`)).filter((r) => r.key === 'k-twice');
    expect(stored).toMatchObject({ response_status: 200, response_body: answer });
  });

  it('Z5: a stored answer the application does not give is replaced by the real one (the record is completed as any reservation)', async () => {
    const run = await makeRun(t.db);
    const workflow = (await t.owner<{ workflow: string }>(`SELECT workflow FROM run WHERE id = $1`, [run.runId]))
      .rows[0]!.workflow;
    const held = await makeEffect(t.db, 'pending', { tool: toolName, runId: run.runId });
    const key = await makeKey(t.db, [workflow]);
    const refusal = { status: 403, body: { code: 'forbidden', detail: 'a check only the application makes' } };
    const idempotencyKey = `k-${suffix()}`;
    const result = await idempotentPost(
      t.db,
      new Request(`${BASE}/api/v1/effects/claim`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.token}` },
      }),
      { ip: null, userAgent: null, requestId: 'test' },
      'effect.claim',
      { key: idempotencyKey, hash: 'h' },
      async () => {
        throw new Error('the operation must not run: the answer is known');
      },
      async () => ({ key: held.key, workflow, finish: async () => refusal }),
    );
    expect(result).toEqual({ ...refusal, replayed: false });
    expect(await records(`runtime:${key.id}`)).toEqual([
      { key: idempotencyKey, response_status: 403, response_body: refusal.body },
    ]);
  });
});

describe('a replayed claim through the API: refusals exactly as before', () => {
  it('A4, Z6: a wrong, revoked or out-of-scope key is refused with the same answer with or without an Idempotency-Key; a held claim is answered and replayed', async () => {
    const run = await makeRun(t.db);
    const workflow = (await t.owner<{ workflow: string }>(`SELECT workflow FROM run WHERE id = $1`, [run.runId]))
      .rows[0]!.workflow;
    const held = await makeEffect(t.db, 'done', { tool: toolName, runId: run.runId });
    const scoped = await makeKey(t.db, [workflow]);
    const outsider = await makeKey(t.db, ['wf_elsewhere']);
    const revoked = await makeKey(t.db, [workflow]);
    await revokeRuntimeKey({ db: t.db, actor: userActor('admin') }, revoked.id, 'leaked');
    const wrongSecret = scoped.token.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
    const refusals = async () =>
      Number(
        (await t.owner<{ n: string }>(`SELECT count(*) AS n FROM audit_entry WHERE outcome = 'refused'`)).rows[0]!.n,
      );
    for (const [token, status] of [
      [wrongSecret, 401],
      [revoked.token, 401],
      [outsider.token, 403],
    ] as const) {
      const before = await refusals();
      const plain = await post('/effects/claim', held.input, { token });
      const keyed = await post('/effects/claim', held.input, { token, idempotencyKey: `k-${suffix()}` });
      expect([plain.status, keyed.status]).toEqual([status, status]);
      expect(keyed.headers.get('www-authenticate')).toBe(plain.headers.get('www-authenticate'));
      const [a, b] = [await plain.json(), await keyed.json()];
      expect({ ...b, instance: undefined }).toEqual({ ...a, instance: undefined });
      expect(JSON.stringify(b)).not.toContain('done');
      // Each refusal audited once (A4).
      expect(await refusals()).toBe(before + 2);
    }
    expect(await records(`runtime:${revoked.id}`)).toEqual([]);
    const k = `k-${suffix()}`;
    const first = await post('/effects/claim', held.input, { token: scoped.token, idempotencyKey: k });
    expect(first.status).toBe(200);
    const answer = await first.json();
    expect(answer).toMatchObject({ claimed: false, key: held.key, state: 'done' });
    const retry = await post('/effects/claim', held.input, { token: scoped.token, idempotencyKey: k });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(answer);
    expect(await records(`runtime:${scoped.id}`)).toEqual([{ key: k, response_status: 200, response_body: answer }]);
  });

  it('Z5, S1: a winning claim runs under the record its first statement reserved, completes it with its answer in its own transaction, and a retry gets that answer', async () => {
    const run = await makeRun(t.db);
    const workflow = (await t.owner<{ workflow: string }>(`SELECT workflow FROM run WHERE id = $1`, [run.runId]))
      .rows[0]!.workflow;
    const template = await makeEffect(t.db, 'done', { tool: toolName, runId: run.runId });
    const scoped = await makeKey(t.db, [workflow]);
    const input = { ...template.input, recordId: `rec-${suffix()}` };
    const k = `k-${suffix()}`;
    const first = await post('/effects/claim', input, { token: scoped.token, idempotencyKey: k });
    expect(first.status).toBe(201);
    const answer = await first.json();
    expect(answer).toMatchObject({ claimed: true, epoch: 1 });
    const retry = await post('/effects/claim', input, { token: scoped.token, idempotencyKey: k });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(answer);
    expect(await records(`runtime:${scoped.id}`)).toEqual([{ key: k, response_status: 201, response_body: answer }]);
    // One claim, one attempt: the retry ran nothing. The answer was stored in the claim's own
    // transaction (now() is per transaction): no completion of its own.
    const attempts = await t.owner<{ started_at: Date }>(`SELECT started_at FROM attempt WHERE key = $1`, [answer.key]);
    expect(attempts.rows).toHaveLength(1);
    const completed = await t.owner<{ completed_at: Date }>(
      `SELECT completed_at FROM idempotency_record WHERE scope = $1 AND key = $2`,
      [`runtime:${scoped.id}`, k],
    );
    expect(completed.rows[0]!.completed_at.getTime()).toBe(attempts.rows[0]!.started_at.getTime());
  });
});
