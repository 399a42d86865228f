// A1 every state change is audited in the same transaction; A2 append-only and hash chained;
// A3 the app role owns nothing and cannot switch the protection off; tamper detection.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import {
  approvePlan,
  bumpEpoch,
  claimEffect,
  completeEffect,
  createRun,
  failEffect,
  markStuck,
  markUnknown,
  resolveUnknown,
  revokeEffect,
  submitPlan,
  type Actor,
  type RequestMeta,
} from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, runtimeActor, snapshot, userActor } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 30 });

async function sqlError(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!error) throw new Error('expected the database to refuse');
  return error as { code?: string; message: string };
}

let requestCounter = 0;
function request(): Required<RequestMeta> {
  requestCounter++;
  return {
    ip: `203.0.113.${requestCounter % 250}`,
    userAgent: `vitest/${requestCounter}`,
    requestId: `req-a1-${requestCounter}`,
  };
}

interface Expectation {
  action: string;
  actor: Actor;
  request: Required<RequestMeta>;
  before: string | null;
  after: string | null;
  reason?: string | null;
  subjectId: string;
}

async function expectAudited(exp: Expectation) {
  const entries = await t.db.auditEntry.findMany({ where: { requestId: exp.request.requestId } });
  expect(entries, exp.action).toHaveLength(1);
  const [entry] = entries;
  const [{ now }] = (await t.db.$queryRaw<{ now: Date }[]>`SELECT now()`) as [{ now: Date }];
  expect(entry).toMatchObject({
    action: exp.action,
    outcome: 'ok',
    actorKind: exp.actor.kind,
    actorId: exp.actor.id,
    actorLabel: exp.actor.label,
    actorRole: exp.actor.kind === 'user' ? exp.actor.role : null,
    beforeState: exp.before,
    afterState: exp.after,
    subjectId: exp.subjectId,
    ip: exp.request.ip,
    userAgent: exp.request.userAgent,
    requestId: exp.request.requestId,
    ...(exp.reason !== undefined ? { reason: exp.reason } : {}),
  });
  // When: database time, assigned by the chain trigger.
  expect(Math.abs(now.getTime() - entry!.at.getTime())).toBeLessThan(60_000);
  expect(entry!.hash).toMatch(/^[0-9a-f]{64}$/);
}

describe('A1: every state change writes its audit entry, with who, what, why, when and where', () => {
  it('A1: run.create, plan.submit, plan.approve, claim, complete, fail, re-claim, unknown, resolve (both), stuck, revoke and bump', async () => {
    const tool = await makeTool(t.db);
    const runtime = runtimeActor();
    let r = request();
    const run = await createRun(
      { db: t.db, actor: runtime, request: r },
      { workflow: 'wf_a1', triggerId: `evt_a1_${Date.now()}` },
    );
    await expectAudited({
      action: 'run.create',
      actor: runtime,
      request: r,
      before: null,
      after: 'running',
      subjectId: run.runId,
    });

    r = request();
    const items = [0, 1, 2, 3, 4, 5].map((i) => ({
      tool: tool.name,
      action: 'campaign_welcome',
      recordId: `c${i}`,
      target: `u${i}@example.com`,
    }));
    const plan = await submitPlan({ db: t.db, actor: runtime, request: r }, { runId: run.runId, items });
    await expectAudited({
      action: 'plan.submit',
      actor: runtime,
      request: r,
      before: null,
      after: 'submitted',
      subjectId: plan.planId,
    });

    r = request();
    const operator = userActor('operator');
    await approvePlan(
      { db: t.db, actor: operator, request: r },
      { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'reviewed' },
    );
    await expectAudited({
      action: 'plan.approve',
      actor: operator,
      request: r,
      before: 'submitted',
      after: 'approved',
      reason: 'reviewed',
      subjectId: plan.planId,
    });

    const claim = async (i: number) => {
      const req = request();
      const c = await claimEffect({ db: t.db, actor: runtime, request: req }, { runId: run.runId, ...items[i]! });
      if (!c.claimed) throw new Error('not claimed');
      await expectAudited({
        action: 'effect.claim',
        actor: runtime,
        request: req,
        before: null,
        after: 'pending',
        subjectId: c.key,
      });
      return c.key;
    };
    // complete
    let key = await claim(0);
    r = request();
    await completeEffect({ db: t.db, actor: runtime, request: r }, { key, receipt: 'msg-0' });
    await expectAudited({
      action: 'effect.complete',
      actor: runtime,
      request: r,
      before: 'pending',
      after: 'done',
      subjectId: key,
    });
    // bump by an operator, with a reason
    r = request();
    await bumpEpoch({ db: t.db, actor: operator, request: r }, { key, reason: 'resend after template fix' });
    await expectAudited({
      action: 'effect.bump',
      actor: operator,
      request: r,
      before: 'done',
      after: 'pending',
      reason: 'resend after template fix',
      subjectId: key,
    });
    // fail, then re-claim
    key = await claim(1);
    r = request();
    await failEffect({ db: t.db, actor: runtime, request: r }, { key, evidence: { status: 550 } });
    await expectAudited({
      action: 'effect.fail',
      actor: runtime,
      request: r,
      before: 'pending',
      after: 'failed',
      subjectId: key,
    });
    r = request();
    await claimEffect({ db: t.db, actor: runtime, request: r }, { runId: run.runId, ...items[1]! });
    await expectAudited({
      action: 'effect.claim',
      actor: runtime,
      request: r,
      before: 'failed',
      after: 'pending',
      subjectId: key,
    });
    // unknown, resolved sent by support
    key = await claim(2);
    r = request();
    await markUnknown({ db: t.db, actor: runtime, request: r }, { key, evidence: { error: 'timeout' } });
    await expectAudited({
      action: 'effect.mark_unknown',
      actor: runtime,
      request: r,
      before: 'pending',
      after: 'unknown',
      subjectId: key,
    });
    const support = userActor('support');
    r = request();
    await resolveUnknown(
      { db: t.db, actor: support, request: r },
      { key, outcome: 'sent', receipt: 'msg-2', reason: 'found in provider log' },
    );
    await expectAudited({
      action: 'effect.resolve_sent',
      actor: support,
      request: r,
      before: 'unknown',
      after: 'done',
      reason: 'found in provider log',
      subjectId: key,
    });
    // unknown, resolved not sent
    key = await claim(3);
    await markUnknown({ db: t.db, actor: runtime }, { key });
    r = request();
    await resolveUnknown(
      { db: t.db, actor: support, request: r },
      { key, outcome: 'not_sent', reason: 'bounced before send' },
    );
    await expectAudited({
      action: 'effect.resolve_not_sent',
      actor: support,
      request: r,
      before: 'unknown',
      after: 'pending',
      reason: 'bounced before send',
      subjectId: key,
    });
    // stuck, then revoked by an operator
    key = await claim(4);
    r = request();
    await markStuck({ db: t.db, actor: runtime, request: r }, { key, evidence: { status: 409 } });
    await expectAudited({
      action: 'effect.mark_stuck',
      actor: runtime,
      request: r,
      before: 'pending',
      after: 'stuck',
      subjectId: key,
    });
    r = request();
    await revokeEffect({ db: t.db, actor: operator, request: r }, { key, reason: 'handled by hand' });
    await expectAudited({
      action: 'effect.revoke',
      actor: operator,
      request: r,
      before: 'stuck',
      after: 'revoked',
      reason: 'handled by hand',
      subjectId: key,
    });

    // Every effect transition has exactly one ok audit entry on its effect chain.
    const [counts] = await t.db.$queryRaw<{ transitions: bigint; audited: bigint }[]>`
      SELECT (SELECT count(*) FROM effect_transition) AS transitions,
             (SELECT count(*) FROM audit_entry WHERE chain LIKE 'effect:%' AND outcome = 'ok') AS audited`;
    expect(Number(counts!.audited)).toBe(Number(counts!.transitions));
  });

  it('A1: the audit entry is written in the same transaction: when it fails, the change is not made', async () => {
    await t.owner(`CREATE TABLE IF NOT EXISTS test_fail_action (action text PRIMARY KEY)`);
    await t.owner(`CREATE OR REPLACE FUNCTION test_fail_audit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM test_fail_action WHERE action = NEW.action) THEN
          RAISE EXCEPTION 'audit write failed (test) for %', NEW.action;
        END IF;
        RETURN NEW;
      END $$`);
    await t.owner(
      `CREATE TRIGGER zz_test_fail_audit BEFORE INSERT ON audit_entry FOR EACH ROW EXECUTE FUNCTION test_fail_audit()`,
    );
    try {
      const tool = await makeTool(t.db);
      const runtime = runtimeActor();
      const run = await makeRun(t.db);
      const pending = await makeEffect(t.db, 'pending', { tool: tool.name, runId: run.runId, runtime });
      const done = await makeEffect(t.db, 'done', { tool: tool.name, runId: run.runId, runtime });
      const unknown = await makeEffect(t.db, 'unknown', { tool: tool.name, runId: run.runId, runtime });
      const failed = await makeEffect(t.db, 'failed', { tool: tool.name, runId: run.runId, runtime });
      const plan = await submitPlan(
        { db: t.db, actor: runtime },
        { runId: run.runId, items: [{ tool: tool.name, action: 'receipt', recordId: 'x', target: 'x@example.com' }] },
      );
      const operator = userActor('operator');
      const otherRun = await makeRun(t.db);
      const cases: [string, () => Promise<unknown>][] = [
        [
          'run.create',
          () => createRun({ db: t.db, actor: runtime }, { workflow: 'wf_tx', triggerId: `evt_tx_${Date.now()}` }),
        ],
        [
          'plan.submit',
          () =>
            submitPlan(
              { db: t.db, actor: runtime },
              {
                runId: otherRun.runId,
                items: [{ tool: tool.name, action: 'receipt', recordId: 'y', target: 'y@example.com' }],
              },
            ),
        ],
        [
          'plan.approve',
          () => approvePlan({ db: t.db, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash }),
        ],
        [
          'effect.claim',
          () =>
            claimEffect(
              { db: t.db, actor: runtime },
              { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'new', target: 'new@example.com' },
            ),
        ],
        ['effect.claim', () => claimEffect({ db: t.db, actor: runtime }, failed.input)],
        ['effect.complete', () => completeEffect({ db: t.db, actor: runtime }, { key: pending.key, receipt: 'm' })],
        ['effect.fail', () => failEffect({ db: t.db, actor: runtime }, { key: pending.key, evidence: { s: 1 } })],
        ['effect.mark_unknown', () => markUnknown({ db: t.db, actor: runtime }, { key: pending.key })],
        ['effect.mark_stuck', () => markStuck({ db: t.db, actor: runtime }, { key: pending.key, evidence: { s: 1 } })],
        ['effect.revoke', () => revokeEffect({ db: t.db, actor: operator }, { key: done.key, reason: 'r' })],
        [
          'effect.resolve_sent',
          () =>
            resolveUnknown(
              { db: t.db, actor: userActor('support') },
              { key: unknown.key, outcome: 'sent', receipt: 'm', reason: 'r' },
            ),
        ],
        [
          'effect.resolve_not_sent',
          () =>
            resolveUnknown(
              { db: t.db, actor: userActor('support') },
              { key: unknown.key, outcome: 'not_sent', reason: 'r' },
            ),
        ],
        ['effect.bump', () => bumpEpoch({ db: t.db, actor: operator }, { key: done.key, reason: 'r' })],
      ];
      for (const [action, command] of cases) {
        await t.owner(`INSERT INTO test_fail_action VALUES ($1) ON CONFLICT DO NOTHING`, [action]);
        const before = await snapshot(t.db);
        const error = await command().then(
          () => null,
          (e: unknown) => e,
        );
        expect(String(error), action).toMatch(/audit write failed/);
        expect(await snapshot(t.db), action).toEqual(before);
        await t.owner(`DELETE FROM test_fail_action`);
      }
    } finally {
      await t.owner(`DROP TRIGGER zz_test_fail_audit ON audit_entry`);
    }
  });
});

describe('A4: refused attempts at a mutating action are recorded too', () => {
  it('A4: refused run creation, plan submission, plan approval and out-of-scope claims each leave one refused entry and change nothing else', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db, 'wf_a4');
    const stranger = runtimeActor(['wf_other']);
    const items = [{ tool: tool.name, action: 'receipt', recordId: 'a4', target: 'a4@example.com' }];
    const plan = await submitPlan({ db: t.db, actor: runtimeActor() }, { runId: run.runId, items });
    const operator = userActor('operator');
    await approvePlan({ db: t.db, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash });
    const cases: [string, string, Actor, string][] = [
      ['run.create by support', 'refused:workflow:wf_a4', userActor('support'), 'forbidden'],
      ['run.create out of scope', 'refused:workflow:wf_a4', stranger, 'forbidden'],
      ['plan.submit by an auditor', `refused:run:${run.runId}`, userActor('auditor'), 'forbidden'],
      ['plan.submit out of scope', `refused:run:${run.runId}`, stranger, 'forbidden'],
      ['plan.approve twice', `refused:run:${run.runId}`, userActor('operator'), 'conflict'],
      ['effect.claim out of scope', `refused:run:${run.runId}`, stranger, 'forbidden'],
    ];
    const commands: Record<string, (actor: Actor) => Promise<unknown>> = {
      'run.create by support': (actor) => createRun({ db: t.db, actor }, { workflow: 'wf_a4', triggerId: 'evt-a4' }),
      'run.create out of scope': (actor) => createRun({ db: t.db, actor }, { workflow: 'wf_a4', triggerId: 'evt-a4' }),
      'plan.submit by an auditor': (actor) => submitPlan({ db: t.db, actor }, { runId: run.runId, items }),
      'plan.submit out of scope': (actor) => submitPlan({ db: t.db, actor }, { runId: run.runId, items }),
      'plan.approve twice': (actor) =>
        approvePlan({ db: t.db, actor }, { planId: plan.planId, itemsHash: plan.itemsHash }),
      'effect.claim out of scope': (actor) => claimEffect({ db: t.db, actor }, { runId: run.runId, ...items[0]! }),
    };
    for (const [name, chain, actor, code] of cases) {
      const before = await snapshot(t.db);
      const refusedBefore = await t.db.auditEntry.count({ where: { chain } });
      const error = await commands[name]!(actor).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, name).toMatchObject({ code });
      expect(await snapshot(t.db), name).toEqual(before);
      const entries = await t.db.auditEntry.findMany({ where: { chain, seq: { gt: refusedBefore } } });
      expect(entries, name).toHaveLength(1);
      expect(entries[0], name).toMatchObject({ outcome: 'refused', actorId: actor.id });
      expect((entries[0]!.detail as { why?: string }).why, name).toBeTruthy();
    }
    expect((await verifyAuditTrail(t.db)).ok).toBe(true);
  });
});

describe('A2: append-only, hash chained', () => {
  it('A2: as the app role, UPDATE, DELETE and TRUNCATE on audit_entry fail; chain heads cannot be written', async () => {
    await makeEffect(t.db, 'done');
    const before = await snapshot(t.db);
    for (const sql of [
      `UPDATE audit_entry SET reason = 'x'`,
      `DELETE FROM audit_entry`,
      `TRUNCATE audit_entry`,
      `TRUNCATE audit_entry CASCADE`,
      `UPDATE audit_chain_head SET seq = 1`,
      `DELETE FROM audit_chain_head`,
      `INSERT INTO audit_chain_head VALUES ('forged', 1, 'x')`,
      `TRUNCATE audit_chain_head`,
    ]) {
      const error = await sqlError(t.db.$executeRawUnsafe(sql));
      expect(error.message, sql).toMatch(/permission denied|append-only/);
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('A2: the triggers refuse UPDATE, DELETE and TRUNCATE even for the owner', async () => {
    const before = await snapshot(t.db);
    for (const sql of [
      `UPDATE audit_entry SET reason = 'x' WHERE id = (SELECT max(id) FROM audit_entry)`,
      `DELETE FROM audit_entry WHERE id = (SELECT max(id) FROM audit_entry)`,
      `TRUNCATE audit_entry`,
      `TRUNCATE audit_chain_head`,
    ]) {
      const error = await sqlError(t.owner(sql));
      expect(error.code, sql).toBe('EL003');
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('A2: the app cannot forge seq, hash or time: the chain trigger assigns them', async () => {
    const runtime = runtimeActor();
    await t.db.auditEntry.create({
      data: {
        chain: 'forge-test',
        seq: 99,
        prevHash: 'f'.repeat(64),
        hash: 'f'.repeat(64),
        at: new Date('2000-01-01'),
        actorKind: 'runtime',
        actorId: runtime.id,
        actorLabel: runtime.label,
        action: 'x',
        subjectType: 's',
        subjectId: '1',
        outcome: 'ok',
      },
    });
    const entry = await t.db.auditEntry.findFirstOrThrow({ where: { chain: 'forge-test' } });
    expect(entry.seq).toBe(1);
    expect(entry.prevHash).toBe('0'.repeat(64));
    expect(entry.hash).not.toBe('f'.repeat(64));
    expect(entry.at.getFullYear()).toBeGreaterThan(2000);
    expect((await verifyAuditTrail(t.db)).ok).toBe(true);
  });

  it('A2: seq = 1 is only a hint that the chain is new: on an existing chain the entry is appended after its head', async () => {
    const runtime = runtimeActor();
    const entry = (n: number) => ({
      chain: 'hint-test',
      seq: 1,
      prevHash: '',
      hash: '',
      at: new Date(),
      actorKind: 'runtime' as const,
      actorId: runtime.id,
      actorLabel: runtime.label,
      action: `x${n}`,
      subjectType: 's',
      subjectId: '1',
      outcome: 'ok',
    });
    // Concurrent first writers of one chain, each hinting "new": one starts it, the others follow it.
    await Promise.all([1, 2, 3, 4, 5].map((n) => t.db.auditEntry.create({ data: entry(n) })));
    await t.db.auditEntry.create({ data: { ...entry(6), seq: 0 } });
    await t.db.auditEntry.create({ data: entry(7) });
    const chain = await t.db.auditEntry.findMany({ where: { chain: 'hint-test' }, orderBy: { seq: 'asc' } });
    expect(chain.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(chain[0]!.prevHash).toBe('0'.repeat(64));
    for (let i = 1; i < chain.length; i++) expect(chain[i]!.prevHash).toBe(chain[i - 1]!.hash);
    expect(chain.at(-1)!.action).toBe('x7');
    const {
      rows: [head],
    } = await t.owner<{ seq: number; hash: string }>(
      `SELECT seq, hash FROM audit_chain_head WHERE chain = 'hint-test'`,
    );
    expect(head).toEqual({ seq: 7, hash: chain.at(-1)!.hash });
    expect((await verifyAuditTrail(t.db)).ok).toBe(true);
  });
  it('A2: verifyAuditTrail is ok on a busy trail, also while it is being written (concurrent claims, transitions, refusals)', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const runtime = runtimeActor();
    const work = async (i: number) => {
      const input = {
        runId: run.runId,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: `busy-${i % 40}`,
        target: `busy${i % 40}@example.com`,
      };
      const c = await claimEffect({ db: t.db, actor: runtime }, input);
      if (!c.claimed) return;
      if (i % 3 === 0) await completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: `m-${i}` });
      else if (i % 3 === 1) await failEffect({ db: t.db, actor: runtime }, { key: c.key, evidence: { i } });
      else
        await completeEffect({ db: t.db, actor: userActor('auditor') }, { key: c.key, receipt: 'x' }).catch(
          () => undefined,
        );
    };
    const verifications: Promise<Awaited<ReturnType<typeof verifyAuditTrail>>>[] = [];
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < 600; i++) {
      jobs.push(work(i));
      if (i % 100 === 0) verifications.push(verifyAuditTrail(t.db));
    }
    await Promise.all(jobs);
    for (const v of await Promise.all(verifications)) expect(v).toMatchObject({ ok: true });
    const final = await verifyAuditTrail(t.db);
    expect(final).toMatchObject({ ok: true });
    const total = await t.db.auditEntry.count();
    expect(final.ok && final.entries).toBe(total);
    expect(total).toBeGreaterThan(100);
  });

  it('A2: canonical form 1 has not changed since the first release: for every entry it equals the jsonb rendering the first hashes used', async () => {
    await t.db.$executeRaw`
      INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action, subject_type, subject_id, reason, outcome, detail)
      VALUES ('test:canonical', 0, '', '', now(), 'system', 'test', ${'quote " backslash \\ tab \t ctl \u0001 é 😀 </script>'}, 'test.canonical', 'test', 'c', ${'line\nbreak'}, 'ok',
              ${JSON.stringify({ z: 1, a: [1, 2.5, null, true], nested: { txt: 'x"y\\z', empty: {} }, '': 'empty key' })}::jsonb)`;
    const [row] = await t
      .owner<{ entries: number; differ: number }>(
        `
      SELECT count(*)::int AS entries,
             count(*) FILTER (WHERE audit_canonical_v1(e) IS DISTINCT FROM jsonb_build_array(
               e.chain, e.seq, e.prev_hash, to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
               e.actor_kind::text, e.actor_id, e.actor_label, e.actor_role, e.action, e.subject_type, e.subject_id, e.run_id::text,
               e.before_state, e.after_state, e.reason, e.outcome, e.detail, e.ip, e.user_agent, e.request_id)::text)::int AS differ
      FROM audit_entry e`,
      )
      .then((r) => r.rows);
    expect(row!.entries).toBeGreaterThan(100);
    expect(row!.differ).toBe(0);
    expect(await verifyAuditTrail(t.db)).toMatchObject({ ok: true });
  });
});

describe('A3: the application role owns nothing and cannot switch the protection off', () => {
  it('A3: the app role owns no table, function or trigger, and is no superuser', async () => {
    const [row] = await t.db.$queryRaw<
      { tables: bigint; functions: bigint; sup: boolean; bypass: boolean; createrole: boolean }[]
    >`
      SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND pg_has_role(current_user, c.relowner, 'USAGE')) AS tables,
             (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND pg_has_role(current_user, p.proowner, 'USAGE')) AS functions,
             r.rolsuper AS sup, r.rolbypassrls AS bypass, r.rolcreaterole AS createrole
      FROM pg_roles r WHERE r.rolname = current_user`;
    expect(row).toEqual({ tables: 0n, functions: 0n, sup: false, bypass: false, createrole: false });
  });

  it('A3: the app role cannot disable, drop or replace the triggers, nor turn them off for its session', async () => {
    const attempts = [
      `ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`,
      `ALTER TABLE audit_entry DISABLE TRIGGER ALL`,
      `ALTER TABLE audit_entry DISABLE TRIGGER USER`,
      `DROP TRIGGER audit_entry_no_update ON audit_entry`,
      `DROP TRIGGER audit_entry_chain ON audit_entry`,
      `ALTER TABLE plan_item DISABLE TRIGGER plan_item_frozen`,
      `ALTER TABLE effect DISABLE TRIGGER effect_transition_guard`,
      `CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
      `SET session_replication_role = replica`,
      `ALTER TABLE audit_entry OWNER TO CURRENT_USER`,
    ];
    for (const sql of attempts) {
      const error = await sqlError(t.db.$executeRawUnsafe(sql));
      expect(error.message, sql).toMatch(/must be owner|permission denied|must be superuser/);
    }
    const [{ enabled }] = (await t.db.$queryRaw<{ enabled: bigint }[]>`
      SELECT count(*) AS enabled FROM pg_trigger WHERE tgrelid = 'audit_entry'::regclass AND NOT tgisinternal AND tgenabled = 'O'`) as [
      { enabled: bigint },
    ];
    // The chain, the refusal of changes, and the audit tree's queue of entries to integrate.
    expect(Number(enabled)).toBe(4);
  });

  it('A3: the app role cannot create objects in public, and a temporary table named like the chain head does not divert the chain trigger', async () => {
    const client = new pg.Client({ connectionString: t.appUrl });
    await client.connect();
    try {
      const error = await sqlError(client.query('CREATE TABLE public.shadow (x int)'));
      expect(error.message).toMatch(/permission denied/);
      // A SECURITY DEFINER body that looked tables up by search_path would write this table instead.
      await client.query('CREATE TEMP TABLE audit_chain_head (chain text PRIMARY KEY, seq integer, hash text)');
      const chain = `test:shadow-${Date.now()}`;
      await client.query(
        `INSERT INTO audit_entry (chain, seq, prev_hash, hash, at, actor_kind, actor_id, actor_label, action, subject_type, subject_id, outcome)
         VALUES ($1, 0, '', '', now(), 'system', 'test', 'test', 'test.shadow', 'test', 'shadow', 'ok')`,
        [chain],
      );
      const shadow = await client.query('SELECT count(*)::int AS n FROM pg_temp.audit_chain_head');
      expect(shadow.rows[0].n).toBe(0);
      const head = await t.owner<{ seq: number }>('SELECT seq FROM public.audit_chain_head WHERE chain = $1', [chain]);
      expect(head.rows).toEqual([{ seq: 1 }]);
    } finally {
      await client.end();
    }
  });
});

describe('A2: tamper detection', () => {
  it('A2: an altered reason is reported at exactly that entry; a re-hashed forgery at the next one', async () => {
    const x = await createTestDatabase({ poolSize: 4 });
    const effects = [];
    for (let i = 0; i < 5; i++) effects.push(await makeEffect(x.db, i % 2 ? 'revoked' : 'done'));
    expect(await verifyAuditTrail(x.db)).toMatchObject({ ok: true });
    const target = await x.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${effects[1]!.key}`, action: 'effect.revoke' },
    });
    await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    await x.owner(`UPDATE audit_entry SET reason = 'nothing to see here' WHERE id = $1`, [target.id]);
    await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    expect(await verifyAuditTrail(x.db)).toEqual({
      ok: false,
      entryId: String(target.id),
      chain: target.chain,
      seq: target.seq,
      problem: 'content does not match its hash',
    });

    // The forger also recomputes the entry's own hash: the link from the next entry breaks instead.
    const next = await x.db.auditEntry.findFirst({ where: { chain: target.chain, seq: target.seq + 1 } });
    await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    await x.owner(`UPDATE audit_entry e SET hash = audit_hash(e.prev_hash, audit_canonical(e)) WHERE id = $1`, [
      target.id,
    ]);
    await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    const report = await verifyAuditTrail(x.db);
    if (next)
      expect(report).toMatchObject({ ok: false, entryId: String(next.id), problem: 'previous hash does not match' });
    else expect(report).toMatchObject({ ok: false, chain: target.chain, problem: 'entries missing after this one' });
  });

  it('A2: an altered actor, time or detail is reported at exactly that entry', async () => {
    for (const set of [
      `actor_id = 'someone-else'`,
      `at = at - interval '1 day'`,
      `detail = '{"epoch": 9}'::jsonb`,
      `after_state = 'failed'`,
    ]) {
      const x = await createTestDatabase({ poolSize: 2 });
      const e = await makeEffect(x.db, 'done');
      const entry = await x.db.auditEntry.findFirstOrThrow({ where: { chain: `effect:${e.key}`, seq: 1 } });
      await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
      await x.owner(`UPDATE audit_entry SET ${set} WHERE id = $1`, [entry.id]);
      await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
      expect(await verifyAuditTrail(x.db), set).toMatchObject({
        ok: false,
        entryId: String(entry.id),
        problem: 'content does not match its hash',
      });
    }
  });

  it('A2: deleting the last entry of a chain, or one in the middle, is reported', async () => {
    const x = await createTestDatabase({ poolSize: 4 });
    const a = await makeEffect(x.db, 'revoked');
    const b = await makeEffect(x.db, 'done');
    expect(await verifyAuditTrail(x.db)).toMatchObject({ ok: true });
    const chainA = await x.db.auditEntry.findMany({ where: { chain: `effect:${a.key}` }, orderBy: { seq: 'asc' } });
    expect(chainA.length).toBeGreaterThanOrEqual(2);
    const last = chainA[chainA.length - 1]!;
    const previous = chainA[chainA.length - 2]!;
    await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    await x.owner(`DELETE FROM audit_entry WHERE id = $1`, [last.id]);
    await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    expect(await verifyAuditTrail(x.db)).toEqual({
      ok: false,
      entryId: String(previous.id),
      chain: last.chain,
      seq: last.seq,
      problem: 'entries missing after this one',
    });

    const y = await createTestDatabase({ poolSize: 4 });
    const c = await makeEffect(y.db, 'revoked');
    const chainC = await y.db.auditEntry.findMany({ where: { chain: `effect:${c.key}` }, orderBy: { seq: 'asc' } });
    await y.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    await y.owner(`DELETE FROM audit_entry WHERE id = $1`, [chainC[0]!.id]);
    await y.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    expect(await verifyAuditTrail(y.db)).toMatchObject({
      ok: false,
      entryId: String(chainC[1]!.id),
      problem: 'sequence gap before this entry',
    });
    void b;
  });

  it('A2: deleting the only entry of a chain is reported on that chain', async () => {
    const x = await createTestDatabase({ poolSize: 2 });
    const run = await makeRun(x.db);
    const only = await x.db.auditEntry.findFirstOrThrow({ where: { chain: `run:${run.runId}` } });
    await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    await x.owner(`DELETE FROM audit_entry WHERE id = $1`, [only.id]);
    await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    expect(await verifyAuditTrail(x.db)).toMatchObject({
      ok: false,
      entryId: null,
      chain: `run:${run.runId}`,
      problem: 'entries missing after this one',
    });
  });
});

describe('A2: the single-pass verification names the same first broken entry', () => {
  // audit_verify() checks links and heads in one ordered pass and the content in another part of
  // the same statement (a Parallel Append at scale): the lowest id must win across the parts, and
  // on one entry the order stays gap, previous hash, content, missing entries. Each case is also
  // verified with parallel plans forced, so the parallel path is held to the same answer.
  async function verifyForcedParallel(appUrl: string) {
    const client = new pg.Client({ connectionString: appUrl });
    await client.connect();
    try {
      await client.query(`SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
                          SET min_parallel_index_scan_size = 0; SET max_parallel_workers_per_gather = 2`);
      const { rows } = await client.query<{
        entry_id: string | null;
        chain: string | null;
        seq: number | null;
        problem: string | null;
        entries: string;
        chains: string;
      }>('SELECT entry_id::text, chain, seq, problem, entries::text, chains::text FROM audit_verify()');
      const row = rows[0]!;
      return row.problem === null
        ? { ok: true, entries: Number(row.entries), chains: Number(row.chains) }
        : { ok: false, entryId: row.entry_id, chain: row.chain, seq: row.seq, problem: row.problem };
    } finally {
      await client.end();
    }
  }

  async function tamper(x: Awaited<ReturnType<typeof createTestDatabase>>, sql: string, params: unknown[]) {
    await x.owner(`ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update`);
    try {
      await x.owner(sql, params);
    } finally {
      await x.owner(`ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update`);
    }
  }

  it('A2: the lowest id wins between a link break and a content break, and one entry keeps its order of problems', async () => {
    const x = await createTestDatabase({ poolSize: 4 });
    const a = await makeEffect(x.db, 'revoked');
    const b = await makeEffect(x.db, 'done');
    const ok = await verifyAuditTrail(x.db);
    const [counts] = await x
      .owner<{ entries: number; chains: number }>(
        `SELECT (SELECT count(*)::int FROM audit_entry) AS entries, (SELECT count(*)::int FROM audit_chain_head) AS chains`,
      )
      .then((r) => r.rows);
    expect(ok).toEqual({ ok: true, entries: counts!.entries, chains: counts!.chains });
    expect(await verifyForcedParallel(x.appUrl)).toEqual(ok);

    const chainA = await x.db.auditEntry.findMany({ where: { chain: `effect:${a.key}` }, orderBy: { seq: 'asc' } });
    const chainB = await x.db.auditEntry.findMany({ where: { chain: `effect:${b.key}` }, orderBy: { seq: 'asc' } });
    expect(chainA.length).toBeGreaterThanOrEqual(2);
    const lastA = chainA[chainA.length - 1]!;
    expect(chainB[0]!.id).toBeGreaterThan(lastA.id);

    // A content break at a higher id (b's first entry) and a broken link at a lower id (a's last
    // entry, whose content no longer matches either): the link at the lower id is named.
    await tamper(x, `UPDATE audit_entry SET reason = 'edited' WHERE id = $1`, [chainB[0]!.id]);
    await tamper(x, `UPDATE audit_entry SET prev_hash = repeat('a', 64) WHERE id = $1`, [lastA.id]);
    let expected: object = {
      ok: false,
      entryId: String(lastA.id),
      chain: lastA.chain,
      seq: lastA.seq,
      problem: 'previous hash does not match',
    };
    expect(await verifyAuditTrail(x.db)).toEqual(expected);
    expect(await verifyForcedParallel(x.appUrl)).toEqual(expected);

    // Now a content break below both: it is named.
    await tamper(x, `UPDATE audit_entry SET actor_label = 'someone else' WHERE id = $1`, [chainA[0]!.id]);
    expected = {
      ok: false,
      entryId: String(chainA[0]!.id),
      chain: chainA[0]!.chain,
      seq: chainA[0]!.seq,
      problem: 'content does not match its hash',
    };
    expect(await verifyAuditTrail(x.db)).toEqual(expected);
    expect(await verifyForcedParallel(x.appUrl)).toEqual(expected);
  });

  it('A2: a chain head whose hash was changed is reported at its last entry, after a content break on that entry', async () => {
    const x = await createTestDatabase({ poolSize: 4 });
    const e = await makeEffect(x.db, 'revoked');
    const chain = await x.db.auditEntry.findMany({ where: { chain: `effect:${e.key}` }, orderBy: { seq: 'asc' } });
    const last = chain[chain.length - 1]!;
    await x.owner(`UPDATE audit_chain_head SET hash = repeat('b', 64) WHERE chain = $1`, [last.chain]);
    let expected: object = {
      ok: false,
      entryId: String(last.id),
      chain: last.chain,
      seq: last.seq,
      problem: 'entries missing after this one',
    };
    expect(await verifyAuditTrail(x.db)).toEqual(expected);
    expect(await verifyForcedParallel(x.appUrl)).toEqual(expected);

    // The same entry's content also altered: the content mismatch is named first.
    await tamper(x, `UPDATE audit_entry SET outcome = 'refused' WHERE id = $1`, [last.id]);
    expected = {
      ok: false,
      entryId: String(last.id),
      chain: last.chain,
      seq: last.seq,
      problem: 'content does not match its hash',
    };
    expect(await verifyAuditTrail(x.db)).toEqual(expected);
    expect(await verifyForcedParallel(x.appUrl)).toEqual(expected);

    // A gap on that entry (its predecessor deleted) comes before its content.
    expect(chain.length).toBeGreaterThanOrEqual(2);
    {
      await tamper(x, `DELETE FROM audit_entry WHERE id = $1`, [chain[chain.length - 2]!.id]);
      expected = {
        ok: false,
        entryId: String(last.id),
        chain: last.chain,
        seq: last.seq,
        problem: 'sequence gap before this entry',
      };
      expect(await verifyAuditTrail(x.db)).toEqual(expected);
      expect(await verifyForcedParallel(x.appUrl)).toEqual(expected);
    }
  });
});
