// Authorization matrix (Z1, Z2, A4, Z4): every mutating console server action and route handler is
// called directly (not through the UI) as each role and with no session. Only the roles the
// permission table allows get through; every refusal is on the audit trail. A disabled user's, or
// a re-roled user's, next request is refused. Failed sign-ins are rate limited.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, suffix } from '../helpers/factories.ts';
import { seenOf, seenOfKeys } from '../helpers/seen.ts';
import { resetEnvCache } from '@/lib/env.ts';
import type { Role } from '@/lib/db/generated/enums.ts';

let t: TestDatabase;
type Actions = typeof import('@/app/actions/ledger.ts') &
  typeof import('@/app/actions/admin.ts') &
  typeof import('@/app/actions/replay.ts');
let actions: Actions;
let auth: {
  runWithRequest: typeof import('@/lib/auth/request.ts').runWithRequest;
  mintSessionToken: typeof import('@/lib/auth/session.ts').mintSessionToken;
  insertUser: typeof import('@/lib/auth/users.ts').insertUser;
  can: typeof import('@/lib/auth/permissions.ts').can;
};
let ledger: typeof import('@/lib/ledger/index.ts');
const users = {} as Record<Role | 'operator2', { id: string; email: string; sessionVersion: number }>;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 10 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-authz-test-secret';
  resetEnvCache();
  actions = {
    ...(await import('@/app/actions/ledger.ts')),
    ...(await import('@/app/actions/admin.ts')),
    ...(await import('@/app/actions/replay.ts')),
  };
  const [request, session, usersMod, perms] = await Promise.all([
    import('@/lib/auth/request.ts'),
    import('@/lib/auth/session.ts'),
    import('@/lib/auth/users.ts'),
    import('@/lib/auth/permissions.ts'),
  ]);
  auth = {
    runWithRequest: request.runWithRequest,
    mintSessionToken: session.mintSessionToken,
    insertUser: usersMod.insertUser,
    can: perms.can,
  };
  ledger = await import('@/lib/ledger/index.ts');
  for (const role of ['admin', 'operator', 'support', 'auditor', 'operator2'] as const) {
    const u = await auth.insertUser(
      t.db,
      {
        email: `${role}-${suffix()}@example.com`,
        name: role,
        role: role === 'operator2' ? 'operator' : role,
        password: 'a-long-enough-password',
      },
      system,
    );
    users[role] = { id: u.id, email: u.email, sessionVersion: u.sessionVersion };
  }
});

async function as<T>(
  who: Role | 'operator2' | 'none',
  fn: () => Promise<T>,
  extra: { origin?: string } = {},
): Promise<T> {
  const cookie = who === 'none' ? null : `next-auth.session-token=${await auth.mintSessionToken(users[who])}`;
  return auth.runWithRequest(
    {
      cookie,
      ip: '203.0.113.9',
      userAgent: 'vitest',
      requestId: randomUUID(),
      origin: extra.origin ?? null,
      host: 'console.test',
      secFetchSite: extra.origin ? null : 'same-origin',
    },
    fn,
  );
}

/** A done effect in a run with an approved plan, fresh per call. */
async function doneKey(state: 'done' | 'unknown' = 'done') {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  const runtime = { kind: 'runtime' as const, id: 'rt', label: 'rt', workflows: ['*'] };
  const c = await ledger.claimEffect(
    { db: t.db, actor: runtime },
    { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r1', target: `x-${suffix()}@example.com` },
  );
  if (!c.claimed) throw new Error('claim lost');
  if (state === 'done') await ledger.completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: 'msg_1' });
  else await ledger.markUnknown({ db: t.db, actor: { kind: 'reconciler', id: 'rec', label: 'rec' } }, { key: c.key });
  return c.key;
}

async function submittedPlan() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  return ledger.submitPlan(
    { db: t.db, actor: system },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `p-${suffix()}@example.com` }],
    },
  );
}

async function openBumpRequest() {
  const key = await doneKey();
  const { requestBump } = await import('@/lib/approvals/request-bump.ts');
  const r = await requestBump(
    { db: t.db, actor: { kind: 'user', id: users.operator2.id, label: users.operator2.email, role: 'operator' } },
    { keys: [key], reason: 'resend' },
  );
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r;
}

const noJobs = { insert: async () => undefined };
const asUser = (who: 'operator' | 'operator2') => ({
  kind: 'user' as const,
  id: users[who].id,
  label: users[who].email,
  role: 'operator' as const,
});

/** A forced replay of a fresh one-target run, requested by operator2 and brought to `status`. */
async function replayIn(status: 'awaiting_approval' | 'approved' | 'running' | 'paused') {
  const replay = await import('@/lib/replay/index.ts');
  const tool = await makeTool(t.db);
  if (status !== 'awaiting_approval')
    await t.db.toolDefinition.update({ where: { name: tool.name }, data: { fourEyesReplay: false } });
  const run = await makeRun(t.db);
  const plan = await ledger.submitPlan(
    { db: t.db, actor: system },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `rp-${suffix()}@example.com` }],
    },
  );
  await ledger.approvePlan(
    { db: t.db, actor: asUser('operator2') },
    { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'checked' },
  );
  const ctx = { db: t.db, actor: asUser('operator2'), jobs: noJobs };
  const r = await replay.requestReplay(ctx, { runId: run.runId, confirmCount: 1, reason: 'crashed run' });
  if (status === 'running' || status === 'paused') await replay.startReplay(ctx, { replayId: r.replayId });
  if (status === 'paused') await replay.pauseReplay(ctx, { replayId: r.replayId });
  return { ...r, runId: run.runId };
}

async function approvedRunForReplay() {
  const tool = await makeTool(t.db);
  const run = await makeRun(t.db);
  const plan = await ledger.submitPlan(
    { db: t.db, actor: system },
    {
      runId: run.runId,
      items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: `rq-${suffix()}@example.com` }],
    },
  );
  await ledger.approvePlan(
    { db: t.db, actor: asUser('operator2') },
    { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'checked' },
  );
  return run.runId;
}

const MATRIX: {
  name: string;
  permission: Parameters<typeof auth.can>[1];
  call: () => Promise<{ ok: boolean; code?: string; error?: string }>;
  /** Z8: the same decision naming no version of what it decides on (bulk: missing for one key). */
  blind?: () => Promise<{ ok: boolean; code?: string; error?: string; field?: string }>;
  seenField?: string;
}[] = [
  {
    name: 'approvePlanAction',
    permission: 'plan.approve',
    call: async () => {
      const p = await submittedPlan();
      return actions.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash, seenStatus: 'submitted' });
    },
    blind: async () => {
      const p = await submittedPlan();
      return actions.approvePlanAction({ planId: p.planId, itemsHash: p.itemsHash });
    },
    seenField: 'seenStatus',
  },
  {
    name: 'rejectPlanAction',
    permission: 'plan.approve',
    call: async () => {
      const p = await submittedPlan();
      return actions.rejectPlanAction({
        planId: p.planId,
        itemsHash: p.itemsHash,
        seenStatus: 'submitted',
        reason: 'wrong list',
      });
    },
    blind: async () => {
      const p = await submittedPlan();
      return actions.rejectPlanAction({ planId: p.planId, itemsHash: p.itemsHash, reason: 'wrong list' });
    },
    seenField: 'seenStatus',
  },
  {
    name: 'revokeAction',
    permission: 'effect.revoke',
    call: async () => {
      const key = await doneKey();
      return actions.revokeAction({ keys: [key], reason: 'customer asked', seen: await seenOfKeys(t.db, [key]) });
    },
    blind: async () => actions.revokeAction({ keys: [await doneKey()], reason: 'customer asked' }),
    seenField: 'seen',
  },
  {
    name: 'revokeAction (bulk, one key without its version)',
    permission: 'effect.revoke',
    call: async () => {
      const keys = [await doneKey(), await doneKey()];
      return actions.revokeAction({ keys, reason: 'customer asked', seen: await seenOfKeys(t.db, keys) });
    },
    blind: async () => {
      const keys = [await doneKey(), await doneKey()];
      return actions.revokeAction({ keys, reason: 'customer asked', seen: await seenOfKeys(t.db, keys.slice(0, 1)) });
    },
    seenField: 'seen',
  },
  {
    name: 'resolveUnknownAction',
    permission: 'effect.resolve',
    call: async () => {
      const key = await doneKey('unknown');
      return actions.resolveUnknownAction({
        key,
        outcome: 'sent',
        receipt: 'msg_9',
        reason: 'seen in provider log',
        seen: await seenOf(t.db, key),
      });
    },
    blind: async () =>
      actions.resolveUnknownAction({
        key: await doneKey('unknown'),
        outcome: 'sent',
        receipt: 'msg_9',
        reason: 'seen in provider log',
      }),
    seenField: 'seen',
  },
  {
    name: 'resolveManyAction',
    permission: 'effect.resolve',
    call: async () => {
      const keys = [await doneKey('unknown'), await doneKey('unknown')];
      return actions.resolveManyAction({
        keys,
        outcome: 'not_sent',
        reason: 'not in the provider log',
        seen: await seenOfKeys(t.db, keys),
      });
    },
    blind: async () => {
      const keys = [await doneKey('unknown'), await doneKey('unknown')];
      return actions.resolveManyAction({
        keys,
        outcome: 'not_sent',
        reason: 'not in the provider log',
        seen: await seenOfKeys(t.db, keys.slice(1)),
      });
    },
    seenField: 'seen',
  },
  {
    name: 'requestBumpAction',
    permission: 'effect.bump.request',
    call: async () => {
      const key = await doneKey();
      return actions.requestBumpAction({ keys: [key], reason: 'resend', seen: await seenOfKeys(t.db, [key]) });
    },
    blind: async () => actions.requestBumpAction({ keys: [await doneKey()], reason: 'resend' }),
    seenField: 'seen',
  },
  {
    name: 'decideBumpAction',
    permission: 'effect.bump.approve',
    call: async () => {
      const r = await openBumpRequest();
      return actions.decideBumpAction({
        requestId: r.requestId,
        setHash: r.setHash,
        decision: 'approve',
        seenStatus: 'open',
      });
    },
    blind: async () => {
      const r = await openBumpRequest();
      return actions.decideBumpAction({ requestId: r.requestId, setHash: r.setHash, decision: 'approve' });
    },
    seenField: 'seenStatus',
  },
  {
    name: 'createUserAction',
    permission: 'users.manage',
    call: () =>
      actions.createUserAction({
        email: `new-${suffix()}@example.com`,
        name: 'New',
        role: 'support',
        password: 'another-long-password',
      }),
  },
  {
    name: 'updateUserAction',
    permission: 'users.manage',
    call: async () => {
      const u = await auth.insertUser(
        t.db,
        { email: `u-${suffix()}@example.com`, name: 'U', role: 'support', password: 'a-long-enough-password' },
        system,
      );
      return actions.updateUserAction({ userId: u.id, role: 'auditor', reason: 'moved team' });
    },
  },
  {
    name: 'createRuntimeKeyAction',
    permission: 'runtime_keys.manage',
    call: () => actions.createRuntimeKeyAction({ name: `k-${suffix()}`, workflows: '*' }),
  },
  {
    name: 'revokeRuntimeKeyAction',
    permission: 'runtime_keys.manage',
    call: async () => {
      const k = await t.db.runtimeKey.create({
        data: { name: 'k', prefix: suffix() + suffix(), secretHash: randomUUID(), workflows: ['*'] },
      });
      return actions.revokeRuntimeKeyAction({ keyId: k.id, reason: 'rotated' });
    },
  },
  {
    name: 'requestReplayAction',
    permission: 'replay.request',
    call: async () => {
      const runId = await approvedRunForReplay();
      return actions.requestReplayAction({
        runId,
        confirmCount: 1,
        reason: 'crashed run',
        setHash: await hashOf(runId),
      });
    },
    blind: async () =>
      actions.requestReplayAction({ runId: await approvedRunForReplay(), confirmCount: 1, reason: 'crashed run' }),
    seenField: 'setHash',
  },
  {
    name: 'approveReplayAction',
    permission: 'replay.approve',
    call: async () => {
      const r = await replayIn('awaiting_approval');
      return actions.approveReplayAction({
        approvalRequestId: r.approvalRequestId!,
        setHash: r.setHash,
        seenStatus: 'open',
      });
    },
    blind: async () => {
      const r = await replayIn('awaiting_approval');
      return actions.approveReplayAction({ approvalRequestId: r.approvalRequestId!, setHash: r.setHash });
    },
    seenField: 'seenStatus',
  },
  {
    name: 'rejectReplayAction',
    permission: 'replay.approve',
    call: async () => {
      const r = await replayIn('awaiting_approval');
      return actions.rejectReplayAction({
        approvalRequestId: r.approvalRequestId!,
        reason: 'wrong run',
        seenStatus: 'open',
      });
    },
    blind: async () => {
      const r = await replayIn('awaiting_approval');
      return actions.rejectReplayAction({ approvalRequestId: r.approvalRequestId!, reason: 'wrong run' });
    },
    seenField: 'seenStatus',
  },
  {
    name: 'startReplayAction',
    permission: 'replay.control',
    call: async () =>
      actions.startReplayAction({ replayId: (await replayIn('approved')).replayId, seenStatus: 'approved' }),
    blind: async () => actions.startReplayAction({ replayId: (await replayIn('approved')).replayId }),
    seenField: 'seenStatus',
  },
  {
    name: 'pauseReplayAction',
    permission: 'replay.control',
    call: async () =>
      actions.pauseReplayAction({ replayId: (await replayIn('running')).replayId, seenStatus: 'running' }),
    blind: async () => actions.pauseReplayAction({ replayId: (await replayIn('running')).replayId }),
    seenField: 'seenStatus',
  },
  {
    name: 'resumeReplayAction',
    permission: 'replay.control',
    call: async () =>
      actions.resumeReplayAction({ replayId: (await replayIn('paused')).replayId, seenStatus: 'paused' }),
    blind: async () => actions.resumeReplayAction({ replayId: (await replayIn('paused')).replayId }),
    seenField: 'seenStatus',
  },
  {
    name: 'cancelReplayAction',
    permission: 'replay.control',
    call: async () =>
      actions.cancelReplayAction({
        replayId: (await replayIn('awaiting_approval')).replayId,
        reason: 'not now',
        seenStatus: 'awaiting_approval',
      }),
    blind: async () =>
      actions.cancelReplayAction({ replayId: (await replayIn('awaiting_approval')).replayId, reason: 'not now' }),
    seenField: 'seenStatus',
  },
  {
    name: 'saveToolAction',
    permission: 'tools.manage',
    call: () =>
      actions.saveToolAction({
        name: `tool_${suffix()}`,
        actions: 'a',
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: 'subject',
      }),
  },
];

// The permission table is imported lazily (after DATABASE_URL is set); the static copy here must agree.
const TABLE: Record<Role, string[]> = {
  admin: ['users.manage', 'runtime_keys.manage', 'tools.manage'],
  operator: [
    'plan.approve',
    'effect.revoke',
    'effect.bump.request',
    'effect.bump.approve',
    'replay.request',
    'replay.approve',
    'replay.control',
  ],
  support: ['effect.resolve'],
  auditor: [],
};
function auth_can(role: Role, permission: string) {
  return TABLE[role].includes(permission);
}

describe('Z2: every console server action, called directly as each role', () => {
  for (const entry of MATRIX) {
    for (const who of ['admin', 'operator', 'support', 'auditor', 'none'] as const) {
      const allowed = who !== 'none' && auth_can(who, entry.permission);
      it(`Z1/Z2/A4: ${entry.name} as ${who} is ${allowed ? 'allowed' : 'refused and audited'}`, async () => {
        const before = await refusedCount(entry.permission, who);
        const result = await as(who, entry.call);
        if (allowed) {
          expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
          expect(await refusedCount(entry.permission, who)).toBe(before);
        } else {
          expect(result).toMatchObject({ ok: false, code: who === 'none' ? 'unauthenticated' : 'forbidden' });
          expect(await refusedCount(entry.permission, who)).toBe(before + 1);
        }
      });
    }
  }
});

describe('Z8: every human decision names the version it was made on', () => {
  for (const entry of MATRIX.filter((m) => m.blind)) {
    const who = (['operator', 'support'] as const).find((r) => auth_can(r, entry.permission))!;
    it(`Z8/A4: ${entry.name} without the version (${entry.seenField}) is refused 422, audited, nothing written`, async () => {
      const before = await refusedCount(entry.permission, who);
      const writesBefore = await writesBy(who);
      const result = await as(who, entry.blind!);
      expect(result, JSON.stringify(result)).toMatchObject({ ok: false, code: 'validation', field: entry.seenField });
      expect(result.error).toMatch(/\(seen\)|^seen:/);
      expect(await refusedCount(entry.permission, who)).toBe(before + 1);
      // Every change writes its audit entry in its own transaction (A1): none by this person means none made.
      expect(await writesBy(who)).toBe(writesBefore);
    });
  }
});

/** A revoke of a fresh done key, on the version a page would show. */
async function revokeFresh() {
  const key = await doneKey();
  return actions.revokeAction({ keys: [key], reason: 'x', seen: await seenOfKeys(t.db, [key]) });
}

async function writesBy(who: Role) {
  const [row] = (
    await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM audit_entry WHERE outcome <> 'refused' AND actor_label = $1`,
      [users[who].email],
    )
  ).rows;
  return Number(row!.n);
}

async function hashOf(runId: string) {
  const { summarizeSet } = await import('@/lib/replay/set.ts');
  return (await summarizeSet(t.db, runId)).setHash;
}

async function refusedCount(permission: string, who: Role | 'none') {
  const label = who === 'none' ? 'no session' : users[who].email;
  const [row] = (
    await t.owner<{ n: string }>(
      `SELECT count(*) AS n FROM audit_entry WHERE outcome = 'refused' AND action = $1 AND actor_label = $2`,
      [permission, label],
    )
  ).rows;
  return Number(row!.n);
}

describe('Z1: the static matrix above is the product permission table', () => {
  it('Z1: the permission table grants exactly these mutating permissions', () => {
    for (const role of ['admin', 'operator', 'support', 'auditor'] as const) {
      for (const p of MATRIX.map((m) => m.permission))
        expect(auth.can(role, p), `${role} ${p}`).toBe(auth_can(role, p));
    }
  });
});

describe('Z4: sessions are checked against the database on every request', () => {
  it("Z4: a disabled user's next request is refused (and audited), whatever token they hold", async () => {
    const op = await auth.insertUser(
      t.db,
      { email: `op-${suffix()}@example.com`, name: 'op', role: 'operator', password: 'a-long-enough-password' },
      system,
    );
    users.operator = { id: op.id, email: op.email, sessionVersion: op.sessionVersion };
    const token = await auth.mintSessionToken(users.operator);
    const call = () =>
      auth.runWithRequest(
        {
          cookie: `next-auth.session-token=${token}`,
          ip: null,
          userAgent: null,
          requestId: randomUUID(),
          origin: null,
          host: null,
          secFetchSite: null,
        },
        async () => revokeFresh(),
      );
    expect(await call()).toMatchObject({ ok: true });
    const disabled = await as('admin', () =>
      actions.updateUserAction({ userId: op.id, disabled: true, reason: 'left the company' }),
    );
    expect(disabled).toMatchObject({ ok: true });
    const before = await refusedCount('effect.revoke', 'operator');
    expect(await call()).toMatchObject({ ok: false, code: 'unauthenticated' });
    expect(await refusedCount('effect.revoke', 'operator')).toBe(before + 1);
  });

  it('Z4: a role change revokes the session at once', async () => {
    const sup = await auth.insertUser(
      t.db,
      { email: `sup-${suffix()}@example.com`, name: 'sup', role: 'support', password: 'a-long-enough-password' },
      system,
    );
    const token = await auth.mintSessionToken({ id: sup.id, email: sup.email, sessionVersion: sup.sessionVersion });
    expect(
      await as('admin', () => actions.updateUserAction({ userId: sup.id, role: 'operator', reason: 'promoted' })),
    ).toMatchObject({ ok: true });
    const result = await auth.runWithRequest(
      {
        cookie: `next-auth.session-token=${token}`,
        ip: null,
        userAgent: null,
        requestId: randomUUID(),
        origin: null,
        host: null,
        secFetchSite: null,
      },
      async () => revokeFresh(),
    );
    expect(result).toMatchObject({ ok: false, code: 'unauthenticated' });
  });

  it('Z4: failed sign-ins are rate limited per account (a correct password is refused while locked)', async () => {
    const { authOptions } = await import('@/lib/auth/options.ts');
    const email = `rl-${suffix()}@example.com`;
    await auth.insertUser(t.db, { email, name: 'rl', role: 'auditor', password: 'the-right-password' }, system);
    const provider = authOptions().providers[0] as unknown as {
      options: { authorize: (c: Record<string, string>, req: unknown) => Promise<unknown> };
    };
    const attempt = (password: string, ip = '198.51.100.7') =>
      provider.options.authorize({ email, password }, { headers: { 'x-forwarded-for': ip } });
    await expect(attempt('the-right-password')).resolves.toMatchObject({ email });
    for (let i = 0; i < 5; i++) await expect(attempt('wrong')).rejects.toThrow('not right');
    await expect(attempt('the-right-password', '198.51.100.8')).rejects.toThrow(
      'Too many failed sign-ins for this account',
    );
  });
});

describe('cross-site requests and route handlers', () => {
  it('Z2: a cross-site call to a server action is refused even for a permitted role, and audited', async () => {
    const before = await refusedCount('effect.revoke', 'operator2' as Role);
    const result = await as('operator2', async () => revokeFresh(), {
      origin: 'https://evil.example',
    });
    expect(result).toMatchObject({ ok: false, code: 'forbidden' });
    expect(result.ok ? '' : result.error).toContain('cross-site');
    expect(await refusedCount('effect.revoke', 'operator2' as Role)).toBe(before + 1);
  });

  it('F5/Z2: the replay progress route handler answers any signed-in role and refuses no session (401)', async () => {
    const { GET } = await import('@/app/api/console/replays/[replayId]/progress/route.ts');
    const r = await replayIn('awaiting_approval');
    const request = async (who: Role | 'none', replayId = r.replayId) => {
      const headers = new Headers({ host: 'console.test' });
      if (who !== 'none') headers.set('cookie', `next-auth.session-token=${await auth.mintSessionToken(users[who])}`);
      return GET(new Request(`http://console.test/api/console/replays/${replayId}/progress`, { headers }), {
        params: Promise.resolve({ replayId }),
      });
    };
    const ok = await request('auditor');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      replayId: r.replayId,
      status: 'awaiting_approval',
      total: 1,
      remaining: 1,
    });
    expect((await request('none')).status).toBe(401);
    expect((await request('support', randomUUID())).status).toBe(404);
  });

  it('A5/Z1: the audit export route handler streams CSV to an auditor, refuses an operator (403) and no session (401)', async () => {
    const { GET } = await import('@/app/api/console/audit/export/route.ts');
    const request = async (who: Role | 'none', format = 'csv') => {
      const headers = new Headers({ host: 'console.test' });
      if (who !== 'none') headers.set('cookie', `next-auth.session-token=${await auth.mintSessionToken(users[who])}`);
      return GET(
        new Request(`http://console.test/api/console/audit/export?format=${format}&action=user.`, { headers }),
        undefined as never,
      );
    };
    const ok = await request('auditor');
    expect(ok.status).toBe(200);
    const text = await ok.text();
    expect(text.split('\r\n')[0]).toContain('actor_label');
    expect(text).toContain('"user.create"');
    const jsonl = await (await request('admin', 'jsonl')).text();
    expect(JSON.parse(jsonl.trim().split('\n')[0]!).action).toMatch(/^user\./);
    expect((await request('operator2' as Role)).status).toBe(403);
    expect((await request('none')).status).toBe(401);
  });

  it('A5/Z5: an audit export whose run filter only looks like a uuid (36 dashes) is a 422 naming run, not a stream cut off mid-body', async () => {
    const { GET } = await import('@/app/api/console/audit/export/route.ts');
    const cookie = `next-auth.session-token=${await auth.mintSessionToken(users.auditor)}`;
    const exports = () => t.db.auditEntry.count({ where: { action: 'audit.export' } });
    const before = await exports();
    for (const run of ['-'.repeat(36), 'gggggggg-gggg-gggg-gggg-gggggggggggg', `${'0'.repeat(35)}-`]) {
      const res = await GET(
        new Request(`http://console.test/api/console/audit/export?format=csv&run=${run}`, {
          headers: { host: 'console.test', cookie },
        }),
        undefined as never,
      );
      expect(res.status, run).toBe(422);
      expect(await res.json()).toMatchObject({ field: 'run' });
    }
    expect(await exports()).toBe(before);
  });
});
