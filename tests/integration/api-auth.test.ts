import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, snapshot } from '../helpers/factories.ts';
import { revokeRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { get, makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  toolName = (await makeTool(t.db)).name;
});

async function refused(chainLike: string) {
  const { rows } = await t.owner<{
    action: string;
    actor_id: string;
    detail: { why: string };
    outcome: string;
    ip: string | null;
    request_id: string | null;
  }>(
    `SELECT action, actor_id, detail, outcome, ip, request_id FROM audit_entry WHERE outcome = 'refused' AND chain LIKE $1 ORDER BY id`,
    [chainLike],
  );
  return rows;
}

describe('runtime-key authentication (Z6, A4)', () => {
  it('A4: a missing, malformed, unknown, wrong-secret or revoked key is 401 on every endpoint, audited, and changes nothing', async () => {
    const run = await makeRun(t.db);
    const good = await makeKey(t.db);
    const revoked = await makeKey(t.db);
    await revokeRuntimeKey({ db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } }, revoked.id, 'rotated');
    const wrongSecret = `elk_${good.prefix}_${'A'.repeat(43)}`;
    const tokens = [undefined, 'not-a-key', 'elk_aaaaaaaaaaaa_' + 'B'.repeat(43), wrongSecret, revoked.token];
    const before = await snapshot(t.db);
    const auditBefore = (await refused('refused:api:auth')).length;
    const body = {
      runId: run.runId,
      tool: toolName,
      action: 'campaign_welcome',
      recordId: 'r1',
      target: 'a@example.com',
    };
    let calls = 0;
    for (const token of tokens) {
      const responses = [
        await post('/effects/claim', body, { token, headers: { 'x-forwarded-for': '203.0.113.9' } }),
        await post('/runs', { workflow: 'wf', triggerId: 'evt' }, { token }),
        await post(`/runs/${run.runId}/replay`, {}, { token }),
        await post('/effects/outcome', { key: 'k', outcome: 'unknown' }, { token }),
        await get(`/runs/${run.runId}`, token),
      ];
      calls += responses.length;
      for (const r of responses) {
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toContain('Bearer');
        expect((await r.json()).code).toBe('unauthenticated');
      }
    }
    expect(await snapshot(t.db)).toEqual(before);
    const audits = await refused('refused:api:auth');
    expect(audits.length - auditBefore).toBe(calls);
    expect(audits.some((a) => a.ip === '203.0.113.9' && a.action === 'effect.claim' && a.request_id)).toBe(true);
    expect(audits.map((a) => a.detail.why)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('revoked'),
        expect.stringContaining('does not match'),
        expect.stringContaining('unknown runtime key'),
        expect.stringContaining('malformed'),
      ]),
    );
  });

  it('Z6: an unknown key prefix and a wrong secret get one answer (same status, same body), so no caller learns which prefixes exist; the audit still tells them apart', async () => {
    const good = await makeKey(t.db);
    const unknownPrefix = `elk_zzzzzzzzzzzz_${'C'.repeat(43)}`;
    const wrongSecret = `elk_${good.prefix}_${'C'.repeat(43)}`;
    const answers = [];
    for (const token of [unknownPrefix, wrongSecret]) {
      const r = await get('/runs/00000000-0000-4000-8000-000000000000', token);
      const { instance: _instance, requestId: _requestId, ...body } = (await r.json()) as Record<string, unknown>;
      answers.push({ status: r.status, authenticate: r.headers.get('www-authenticate'), body });
    }
    expect(answers[0]!.status).toBe(401);
    expect(answers[0]!.body.detail).toContain('unknown key or wrong secret');
    expect(answers[1]).toEqual(answers[0]);
    const whys = (await refused('refused:api:auth')).slice(-2).map((a) => a.detail.why);
    expect(whys).toEqual(['unknown runtime key', 'runtime key secret does not match']);
  });

  it('A4, Z6: a key scoped to another workflow gets 403 on every endpoint, each refusal audited, nothing changed', async () => {
    const ownKey = await makeKey(t.db, ['wf_own']);
    const otherRun = await makeRun(t.db, 'wf_other');
    const other = await makeKey(t.db, ['wf_other']);
    const w = await (
      await post(
        '/effects/claim',
        { runId: otherRun.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r1', target: 'z@example.com' },
        { token: other.token },
      )
    ).json();
    const before = await snapshot(t.db);
    const token = ownKey.token;
    const responses = {
      claim: await post(
        '/effects/claim',
        { runId: otherRun.runId, tool: toolName, action: 'campaign_welcome', recordId: 'r2', target: 'y@example.com' },
        { token },
      ),
      createRun: await post('/runs', { workflow: 'wf_other', triggerId: 'evt-x' }, { token }),
      plan: await post(
        `/runs/${otherRun.runId}/plan`,
        { items: [{ tool: toolName, action: 'campaign_welcome', recordId: 'r3', target: 'x@example.com' }] },
        { token },
      ),
      replay: await post(`/runs/${otherRun.runId}/replay`, {}, { token }),
      read: await get(`/runs/${otherRun.runId}`, token),
      outcome: await post(
        '/effects/outcome',
        { key: w.key, attemptId: w.attemptId, outcome: 'done', receipt: 'stolen' },
        { token },
      ),
      deletion: await post('/effects/deletion', { key: w.key, epoch: w.epoch, objectId: 'obj' }, { token }),
      response: await post(
        `/attempts/${w.attemptId}/response`,
        { status: 200, headers: [], bodyBase64: '' },
        { token },
      ),
    };
    for (const [name, r] of Object.entries(responses)) {
      expect(r.status, name).toBe(403);
      const body = await r.json();
      expect(body.code).toBe('forbidden');
      expect(body.detail).toContain('wf_other');
    }
    expect(await snapshot(t.db)).toEqual(before);
    const audits = [
      ...(await refused(`refused:run:${otherRun.runId}`)),
      ...(await refused(`refused:effect:%`)),
      ...(await refused('refused:workflow:wf_other')),
    ].filter((a) => a.actor_id === ownKey.id);
    expect(audits.map((a) => a.action).sort()).toEqual(
      [
        'attempt.record_response',
        'effect.claim',
        'effect.complete',
        'effect.revoke_deletion',
        'plan.submit',
        'run.create',
        'run.read',
        'run.replay_request',
      ].sort(),
    );
  });

  it("K1: two first runs of a new trigger at once both get a run of the same event; another workflow's trigger is refused unnamed and audited", async () => {
    const { token } = await makeKey(t.db, ['wf_race']);
    for (let round = 0; round < 5; round++) {
      const triggerId = `evt-race-${round}`;
      const answers = await Promise.all(
        Array.from({ length: 4 }, () => post('/runs', { workflow: 'wf_race', triggerId }, { token })),
      );
      expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      const events = await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM event WHERE trigger_id = $1', [
        triggerId,
      ]);
      expect(events.rows[0]!.n).toBe(1);
    }
    await makeRun(t.db, 'wf_secret', 'evt-taken');
    const before = await snapshot(t.db);
    const r = await post('/runs', { workflow: 'wf_race', triggerId: 'evt-taken' }, { token });
    expect(r.status).toBe(403);
    const body = await r.json();
    expect(body).toMatchObject({ code: 'forbidden', field: 'triggerId' });
    expect(JSON.stringify(body)).not.toContain('wf_secret');
    expect(await snapshot(t.db)).toEqual(before);
    expect((await refused('refused:workflow:wf_race')).map((a) => a.detail.why)).toContain(
      'trigger evt-taken belongs to another workflow',
    );
  });

  it("K1 Z6: a trigger id spelled in another Unicode form is the same event, so another workflow's runtime key is refused it and cannot reach its keys; control characters are refused", async () => {
    const composed = 'caf\u00e9-42';
    const decomposed = 'cafe\u0301-42';
    const owner = await makeKey(t.db, ['wf_nfc_a']);
    const first = await post('/runs', { workflow: 'wf_nfc_a', triggerId: composed }, { token: owner.token });
    expect(first.status).toBe(201);
    const { token } = await makeKey(t.db, ['wf_nfc_b']);
    const before = await snapshot(t.db);
    const other = await post('/runs', { workflow: 'wf_nfc_b', triggerId: decomposed }, { token });
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: 'forbidden', field: 'triggerId' });
    const events = await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM event WHERE trigger_id IN ($1, $2)', [
      composed,
      decomposed,
    ]);
    expect(events.rows[0]!.n).toBe(1);
    expect(await snapshot(t.db)).toEqual(before);
    const same = await post('/runs', { workflow: 'wf_nfc_a', triggerId: decomposed }, { token: owner.token });
    expect(same.status).toBe(201);
    // A run whose event was stored before trigger ids were normalized claims nothing: its keys are
    // its normal-form twin's.
    const legacy = await t.owner<{ id: string }>(
      `WITH e AS (INSERT INTO event (id, trigger_id, workflow) VALUES (gen_random_uuid(), $1, 'wf_nfc_b') RETURNING id)
       INSERT INTO run (id, workflow, event_id, created_by_kind, created_by) SELECT gen_random_uuid(), 'wf_nfc_b', e.id, 'system', 'old' FROM e RETURNING id`,
      ['legacy-cafe\u0301'],
    );
    const tool = await makeTool(t.db);
    const claimed = await post(
      '/effects/claim',
      {
        runId: legacy.rows[0]!.id,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: 'r',
        target: 'n@example.com',
      },
      { token },
    );
    expect(claimed.status).toBe(422);
    expect(await claimed.json()).toMatchObject({ field: 'runId' });
    const control = await post('/runs', { workflow: 'wf_nfc_a', triggerId: 'evt\u0007bell' }, { token: owner.token });
    expect(control.status).toBe(422);
    expect(await control.json()).toMatchObject({ field: 'triggerId' });
  });

  it('Z6: creating and revoking a runtime key is audited, only the hash is stored, and the key stops working at once', async () => {
    const created = await makeKey(t.db, ['wf_a'], 'billing-agent');
    expect(created.token).toMatch(/^elk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    const { rows } = await t.owner<{ secret_hash: string }>('SELECT secret_hash FROM runtime_key WHERE id = $1', [
      created.id,
    ]);
    expect(rows[0]!.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    // The secret is everything after "elk_<prefix>_" (base64url: it may itself contain "_").
    const secret = created.token.slice('elk_'.length + created.prefix.length + 1);
    expect(secret).toHaveLength(43);
    expect(rows[0]!.secret_hash).not.toContain(secret);
    const run = await makeRun(t.db, 'wf_a');
    expect((await get(`/runs/${run.runId}`, created.token)).status).toBe(200);
    await revokeRuntimeKey(
      {
        db: t.db,
        actor: { kind: 'user', id: '00000000-0000-4000-8000-000000000001', label: 'admin@example.com', role: 'admin' },
      },
      created.id,
      'leaked in a log',
    );
    expect((await get(`/runs/${run.runId}`, created.token)).status).toBe(401);
    const audit = await t.owner<{ action: string }>(`SELECT action FROM audit_entry WHERE chain = $1 ORDER BY seq`, [
      `runtime_key:${created.id}`,
    ]);
    expect(audit.rows.map((r) => r.action)).toEqual(['runtime_key.create', 'runtime_key.revoke']);
  });

  it("Z6: a key's last use is recorded on its first request and then at most once a minute", async () => {
    const run = await makeRun(t.db);
    const key = await makeKey(t.db);
    const lastUsed = async () =>
      (await t.owner<{ last_used_at: Date | null }>('SELECT last_used_at FROM runtime_key WHERE id = $1', [key.id]))
        .rows[0]!.last_used_at;
    expect(await lastUsed()).toBeNull();
    expect((await get(`/runs/${run.runId}`, key.token)).status).toBe(200);
    const first = await lastUsed();
    expect(first).not.toBeNull();
    expect((await get(`/runs/${run.runId}`, key.token)).status).toBe(200);
    expect(await lastUsed()).toEqual(first);
    // Two minutes later (the stored time moved back), the next request records it again.
    await t.owner(`UPDATE runtime_key SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, [key.id]);
    const stale = await lastUsed();
    expect((await get(`/runs/${run.runId}`, key.token)).status).toBe(200);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(stale!.getTime() + 60_000);
  });
});
