// Security (issue 6): the authorization matrix (every mutating server action x every role x session
// and origin conditions), object-level scope for runtime keys and cross-object binding for users,
// four-eyes, sign-in brute force, audit immutability and tamper detection, audited audit reads, and
// secrets at rest and in logs. Each row counts the calls that succeeded without authority and the
// refusals that left no audit entry (both "unauthorized").
import '../support/abuse-als.ts';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { can, type Permission } from '@/lib/auth/permissions.ts';
import { updateUser } from '@/lib/auth/users.ts';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { createRuntimeKey, revokeRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { approveReplay } from '@/lib/replay/index.ts';
import { approvePlan } from '@/lib/ledger/index.ts';
import { providerRegistryFromEnv } from '@/lib/providers/registry.ts';
import { createLedger } from '@/lib/sdk/index.ts';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { makeRun, makeTool, suffix } from '@/tests/helpers/factories.ts';
import { post, routeFetch, BASE } from '@/tests/integration/api-support.ts';
import type { ProofContext, ProofPart, ProofRow, ProofSection } from '../section.ts';
import {
  HOST,
  openAbuseEnv,
  pooled,
  ROLE_LIST,
  SYSTEM,
  type AbuseEnv,
  type ProofUser,
  type Who,
} from '../support/abuse-env.ts';
import { Fixtures, operatorActor } from '../support/abuse-fixtures.ts';
import { renderPage } from '../support/abuse-render.tsx';
import { viewPage } from '../support/abuse-view-page.tsx';
import { matrixEntries, refusedFor, type MatrixEntry } from '../support/console-actions.ts';
import { workflowMatrix } from '../support/workflow-matrix.ts';
import type { Role } from '@/lib/db/generated/enums.ts';

const row = (tried: string, trials: number, unauthorized: number, observed: string): ProofRow => ({
  tried,
  trials,
  lost: 0,
  duplicated: 0,
  unauthorized,
  observed,
});

type Condition =
  | 'valid session, same origin'
  | 'valid session, no Origin'
  | 'expired session'
  | 'disabled user'
  | 'cross-site Origin'
  | 'opaque Origin (null)'
  | 'no session'
  | 'x-middleware-subrequest, no session';

/** 1. Every mutating server action x every role x every condition. */
async function authorizationMatrix(env: AbuseEnv, fx: Fixtures, rounds: number, log: (s: string) => void) {
  const entries = await matrixEntries(fx, env);
  const disabled = {} as Record<Role, ProofUser>;
  for (const role of ROLE_LIST) {
    disabled[role] = await env.newUser(role, `disabled-${role}`);
    await updateUser(
      { db: env.db, actor: operatorActor(env.users.admin) },
      { userId: disabled[role].id, disabled: true, reason: 'left the company' },
    );
  }
  const cells: { entry: MatrixEntry; who: Role | 'none'; condition: Condition }[] = [];
  for (const entry of entries) {
    for (const role of ROLE_LIST) {
      for (const condition of [
        'valid session, same origin',
        'valid session, no Origin',
        'expired session',
        'disabled user',
        'cross-site Origin',
        'opaque Origin (null)',
      ] as const)
        cells.push({ entry, who: role, condition });
    }
    cells.push(
      { entry, who: 'none', condition: 'no session' },
      { entry, who: 'none', condition: 'x-middleware-subrequest, no session' },
    );
  }
  let trials = 0,
    allowed = 0,
    refused = 0,
    wronglyAllowed = 0,
    unaudited = 0,
    wronglyRefused = 0;
  const examples: string[] = [];
  for (let r = 0; r < rounds; r++) {
    // Cells are independent (fresh objects, own request id): four at a time.
    await pooled(cells, 4, async ({ entry, who, condition }) => {
      const requestId = randomUUID();
      const user = who === 'none' ? null : condition === 'disabled user' ? disabled[who] : env.users[who];
      const cookie =
        user === null
          ? null
          : condition === 'expired session'
            ? await env.expiredCookieFor(user)
            : await env.cookieFor(user);
      const origin =
        condition === 'cross-site Origin'
          ? 'https://evil.example'
          : condition === 'opaque Origin (null)'
            ? 'null'
            : condition === 'valid session, no Origin' || who === 'none'
              ? null
              : `https://${HOST}`;
      const secFetchSite =
        condition === 'cross-site Origin'
          ? 'cross-site'
          : condition === 'valid session, same origin'
            ? 'same-origin'
            : null;
      const permitted =
        who !== 'none' &&
        can(who, entry.permission) &&
        (condition === 'valid session, same origin' || condition === 'valid session, no Origin');
      // Server actions see the request only through the guard's RequestInfo; the product has no middleware
      // (no middleware.ts / proxy.ts) for x-middleware-subrequest to skip, so that call is a plain anonymous one.
      const result = await env.as(who === 'none' ? 'none' : (who as Who), entry.call, {
        cookie,
        origin,
        secFetchSite,
        requestId,
      });
      trials++;
      if (result.ok) {
        allowed++;
        if (!permitted) {
          wronglyAllowed++;
          examples.push(`${entry.name} as ${who} (${condition}) succeeded`);
        }
      } else {
        refused++;
        if (permitted) {
          wronglyRefused++;
          examples.push(`${entry.name} as ${who} (${condition}) refused: ${result.error}`);
        } else if ((await refusedFor(env, requestId)) < 1) {
          unaudited++;
          examples.push(`${entry.name} as ${who} (${condition}) refused without an audit entry`);
        }
      }
    });
    log(`security: authorization matrix round ${r + 1}/${rounds}`);
  }
  return {
    row: row(
      `authorization matrix: ${entries.length} mutating server actions x ${ROLE_LIST.length} roles x {same origin, no Origin, expired session, disabled user, cross-site Origin, opaque Origin} + no session + x-middleware-subrequest (${cells.length} cells x ${rounds} rounds)`,
      trials,
      wronglyAllowed + unaudited,
      `${allowed} allowed (all permitted by lib/auth/permissions.ts), ${refused} refused, ${refused - unaudited - wronglyRefused} refusals found on the audit trail by request id; ${wronglyAllowed} allowed without authority, ${unaudited} unaudited refusals, ${wronglyRefused} permitted calls refused${examples.length ? `: ${examples.slice(0, 4).join(' | ')}` : ''}`,
    ),
    wronglyRefused,
  };
}

/** 1b. The console route handlers (reads) as each role and condition, with real Requests. */
async function routeMatrix(env: AbuseEnv, fx: Fixtures, rounds: number) {
  const { GET: exportGet } = await import('@/app/api/console/audit/export/route.ts');
  const { GET: progressGet } = await import('@/app/api/console/replays/[replayId]/progress/route.ts');
  const replay = await fx.replay('awaiting_approval');
  const routes: { name: string; permission: Permission; call: (h: Headers) => Promise<Response> }[] = [
    {
      name: 'GET /api/console/audit/export',
      permission: 'audit.export',
      call: (h) =>
        exportGet(
          new Request(`http://${HOST}/api/console/audit/export?format=jsonl&action=user.`, { headers: h }),
          undefined as never,
        ),
    },
    {
      name: 'GET /api/console/replays/{id}/progress',
      permission: 'console.read',
      call: (h) =>
        progressGet(new Request(`http://${HOST}/api/console/replays/${replay.replayId}/progress`, { headers: h }), {
          params: Promise.resolve({ replayId: replay.replayId }),
        }),
    },
  ];
  const disabled = await env.newUser('auditor', 'disabled-reader');
  await updateUser(
    { db: env.db, actor: operatorActor(env.users.admin) },
    { userId: disabled.id, disabled: true, reason: 'left' },
  );
  let trials = 0,
    wronglyAllowed = 0,
    wronglyRefused = 0;
  const examples: string[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const route of routes) {
      for (const who of [...ROLE_LIST, 'none'] as const) {
        for (const condition of ['valid', 'expired', 'disabled', 'x-middleware-subrequest'] as const) {
          if (who === 'none' && condition !== 'valid' && condition !== 'x-middleware-subrequest') continue;
          const h = new Headers({ host: HOST });
          const user = who === 'none' ? null : condition === 'disabled' ? disabled : env.users[who];
          if (user)
            h.set('cookie', condition === 'expired' ? await env.expiredCookieFor(user) : await env.cookieFor(user));
          if (condition === 'x-middleware-subrequest')
            h.set('x-middleware-subrequest', 'middleware:middleware:middleware:middleware:middleware');
          const res = await route.call(h);
          await res.body?.cancel();
          trials++;
          const permitted =
            who !== 'none' && condition !== 'expired' && condition !== 'disabled' && can(user!.role, route.permission);
          if (res.status < 300 && !permitted) {
            wronglyAllowed++;
            examples.push(`${route.name} as ${who} (${condition}) -> ${res.status}`);
          }
          if (res.status >= 300 && permitted) {
            wronglyRefused++;
            examples.push(`${route.name} as ${who} (${condition}) refused ${res.status}`);
          }
        }
      }
    }
  }
  return {
    row: row(
      'console route handlers (audit export, replay progress) x roles x {valid, expired session, disabled user, x-middleware-subrequest header}, real Requests',
      trials,
      wronglyAllowed,
      `${wronglyAllowed} allowed without authority, ${wronglyRefused} permitted calls refused; reads are not "mutating", so their refusals are answered 401/403 but not audited (A4 covers mutating actions)${examples.length ? `: ${examples.slice(0, 4).join(' | ')}` : ''}`,
    ),
    wronglyRefused,
  };
}

/** 2. Object-level checks: a runtime key scoped to one workflow on another workflow's run, effect and attempt. */
async function objectLevel(env: AbuseEnv, n: number) {
  const tool = await makeTool(env.db);
  const mine = `wf_mine_${suffix()}`;
  const scoped = await createRuntimeKey(
    { db: env.db, actor: SYSTEM },
    { name: `scoped-${suffix()}`, workflows: [mine] },
  );
  const other = await createRuntimeKey({ db: env.db, actor: SYSTEM }, { name: `other-${suffix()}`, workflows: ['*'] });
  const revoked = await createRuntimeKey(
    { db: env.db, actor: SYSTEM },
    { name: `revoked-${suffix()}`, workflows: ['*'] },
  );
  await revokeRuntimeKey({ db: env.db, actor: operatorActor(env.users.admin) }, revoked.id, 'rotated');
  let trials = 0,
    wronglyAllowed = 0,
    unaudited = 0;
  const statuses = new Map<number, number>();
  const examples: string[] = [];
  const check = async (label: string, res: Response, requestId: string, expect: number) => {
    trials++;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    await res.body?.cancel();
    if (res.status !== expect) {
      wronglyAllowed++;
      examples.push(`${label} -> ${res.status}`);
      return;
    }
    if ((await refusedFor(env, requestId)) < 1) {
      unaudited++;
      examples.push(`${label} refused without an audit entry`);
    }
  };
  for (let i = 0; i < n; i++) {
    // Another workflow's run with a claimed attempt and a done effect, made with the all-workflows key.
    const run = (await (
      await post('/runs', { workflow: `wf_other_${suffix()}`, triggerId: `evt_${suffix()}` }, { token: other.token })
    ).json()) as { runId: string };
    const won = (await (
      await post(
        '/effects/claim',
        { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r', target: `o-${suffix()}@example.com` },
        { token: other.token },
      )
    ).json()) as { key: string; epoch: number; attemptId: string };
    const calls: [string, string, string, unknown, number][] = [
      ['GET /runs/{other}', 'GET', `/runs/${run.runId}`, undefined, 403],
      ['POST /runs (other workflow)', 'POST', '/runs', { workflow: `wf_other_${suffix()}`, triggerId: 'e' }, 403],
      [
        'POST /runs/{other}/plan',
        'POST',
        `/runs/${run.runId}/plan`,
        { items: [{ tool: tool.name, action: 'receipt', recordId: 'r', target: 'p@example.com' }] },
        403,
      ],
      ['POST /runs/{other}/replay', 'POST', `/runs/${run.runId}/replay`, {}, 403],
      [
        'POST /effects/claim (other run)',
        'POST',
        '/effects/claim',
        { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r2', target: `x-${suffix()}@example.com` },
        403,
      ],
      [
        'POST /effects/outcome (other key)',
        'POST',
        '/effects/outcome',
        { key: won.key, epoch: won.epoch, attemptId: won.attemptId, outcome: 'done', receipt: 'forged' },
        403,
      ],
      [
        'POST /effects/deletion (other key)',
        'POST',
        '/effects/deletion',
        { key: won.key, epoch: won.epoch, objectId: 'obj' },
        403,
      ],
      [
        'POST /attempts/{other}/response',
        'POST',
        `/attempts/${won.attemptId}/response`,
        { status: 200, headers: [], bodyBase64: '' },
        403,
      ],
    ];
    for (const [label, method, path, body, expect] of calls) {
      const requestId = randomUUID();
      const headers: Record<string, string> = {
        authorization: `Bearer ${scoped.token}`,
        'x-request-id': requestId,
        'content-type': 'application/json',
      };
      await check(
        label,
        await routeFetch(`${BASE}/api/v1${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        requestId,
        expect,
      );
    }
    for (const [label, token] of [
      ['revoked key', revoked.token],
      ['forged secret', `${other.token.slice(0, -4)}AAAA`],
      ['no key', ''],
    ] as const) {
      const requestId = randomUUID();
      const headers: Record<string, string> = {
        'x-request-id': requestId,
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      };
      await check(
        `POST /effects/claim with ${label}`,
        await routeFetch(`${BASE}/api/v1/effects/claim`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            runId: run.runId,
            tool: tool.name,
            action: 'receipt',
            recordId: 'r3',
            target: `y-${suffix()}@example.com`,
          }),
        }),
        requestId,
        401,
      );
    }
  }
  return row(
    `object level, runtime keys: a key scoped to one workflow on another workflow's run, plan, replay, claim, outcome, deletion and attempt; revoked, forged and missing keys (${n} rounds x 11 calls)`,
    trials,
    wronglyAllowed + unaudited,
    `statuses ${[...statuses].map(([s, c]) => `${s}: ${c}`).join(', ')}; ${wronglyAllowed} answered other than 403/401, ${unaudited} refusals without an audit entry${examples.length ? `: ${examples.slice(0, 4).join(' | ')}` : ''}`,
  );
}

/** 3. Four-eyes and cross-object binding for users. */
async function fourEyes(env: AbuseEnv, fx: Fixtures, n: number) {
  const requester = operatorActor(env.users.operator2);
  const other = operatorActor(env.users.operator);
  let trials = 0,
    wronglyAllowed = 0,
    unaudited = 0;
  const examples: string[] = [];
  const kinds = new Map<string, number>();
  const attempt = async (
    label: string,
    fn: (request: { requestId: string }) => Promise<unknown>,
    succeeded: (result: unknown) => Promise<boolean>,
  ) => {
    const requestId = randomUUID();
    trials++;
    kinds.set(label, (kinds.get(label) ?? 0) + 1);
    let result: unknown;
    try {
      result = await fn({ requestId });
    } catch {
      result = null;
    }
    if (result !== null && (await succeeded(result))) {
      wronglyAllowed++;
      examples.push(`${label} succeeded`);
      return;
    }
    if ((await refusedFor(env, requestId)) < 1) {
      unaudited++;
      examples.push(`${label}: refused without an audit entry`);
    }
  };
  const req = (r: { requestId: string }, actor = other) => ({
    db: env.db,
    actor,
    request: { ip: '203.0.113.7', userAgent: 'proof', requestId: r.requestId },
  });
  const bumpApproved = async (id: string) =>
    (await env.db.approvalRequest.findUnique({ where: { id } }))?.status === 'approved';
  for (let i = 0; i < n; i++) {
    const b1 = await fx.bumpRequest();
    await attempt(
      'bump: the requester approves their own request',
      (r) => decideBump(req(r, requester), { requestId: b1.requestId, setHash: b1.setHash, decision: 'approve' }),
      () => bumpApproved(b1.requestId),
    );
    const b2 = await fx.bumpRequest();
    await attempt(
      "bump: approval carrying another request's set hash",
      (r) => decideBump(req(r), { requestId: b2.requestId, setHash: b1.setHash, decision: 'approve' }),
      () => bumpApproved(b2.requestId),
    );
    // Expiry: the request's clock is moved back as the owner (what 24 hours of waiting would do).
    await env.owner(`UPDATE approval_request SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      b2.requestId,
    ]);
    await attempt(
      'bump: approval of an expired request',
      (r) => decideBump(req(r), { requestId: b2.requestId, setHash: b2.setHash, decision: 'approve' }),
      () => bumpApproved(b2.requestId),
    );
    const r1 = await fx.replay('awaiting_approval');
    const replayApproved = async (id: string) =>
      (await env.db.replay.findUnique({ where: { id } }))?.status === 'approved';
    await attempt(
      'replay: the requester approves their own replay',
      (r) => approveReplay(req(r, requester), { approvalRequestId: r1.approvalRequestId!, setHash: r1.setHash }),
      () => replayApproved(r1.replayId),
    );
    const r2 = await fx.replay('awaiting_approval');
    await attempt(
      'replay: approval carrying a different set hash',
      (r) => approveReplay(req(r), { approvalRequestId: r2.approvalRequestId!, setHash: 'e'.repeat(64) }),
      () => replayApproved(r2.replayId),
    );
    await env.owner(`UPDATE approval_request SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      r2.approvalRequestId,
    ]);
    await attempt(
      'replay: approval of an expired request',
      (r) => approveReplay(req(r), { approvalRequestId: r2.approvalRequestId!, setHash: r2.setHash }),
      () => replayApproved(r2.replayId),
    );
    const p1 = await fx.submittedPlan();
    const p2 = await fx.submittedPlan();
    const planApproved = async (id: string) => (await env.db.plan.findUnique({ where: { id } }))?.status === 'approved';
    await attempt(
      "plan: approval carrying another plan's items hash",
      (r) => approvePlan(req(r), { planId: p2.planId, itemsHash: p1.itemsHash }),
      () => planApproved(p2.planId),
    );
  }
  return row(
    `four-eyes and cross-object binding (users): self-approval, another set's hash, expired requests, for epoch bumps, forced replays and plans (${n} rounds x ${kinds.size} kinds)`,
    trials,
    wronglyAllowed + unaudited,
    `${wronglyAllowed} approvals went through, ${unaudited} refusals left no audit entry${examples.length ? `: ${[...new Set(examples)].slice(0, 5).join(' | ')}` : ''}. Console users are not scoped by workflow (Z1: every role reads everything), so the user-side object check is that a decision is bound to the exact object and set it names`,
  );
}

/** 4. Brute force on the credentials sign-in. */
async function bruteForce(env: AbuseEnv, accounts: number, addresses: number) {
  const { authOptions } = await import('@/lib/auth/options.ts');
  const provider = authOptions().providers[0] as unknown as {
    options: { authorize: (c: Record<string, string>, req: unknown) => Promise<unknown> };
  };
  const signIn = (email: string, password: string, ip: string) =>
    provider.options.authorize({ email, password }, { headers: { 'x-forwarded-for': ip, 'user-agent': 'proof' } }).then(
      () => true,
      () => false,
    );
  const { MAX_PER_ACCOUNT, MAX_PER_ADDRESS } = await import('@/lib/auth/rate-limit.ts');
  let trials = 0,
    breaches = 0,
    unaudited = 0;
  const examples: string[] = [];
  // Refused sign-ins are appended on the "refused:auth:<email>" chain (lib/auth/options.ts).
  const audited = async (email: string) =>
    Number(
      (
        await env.owner<{ n: string }>(`SELECT count(*) AS n FROM audit_entry WHERE chain = $1`, [
          `refused:auth:${email}`,
        ])
      )[0]!.n,
    );
  for (let i = 0; i < accounts; i++) {
    const u = await env.newUser('auditor', `bf${i}`);
    for (let k = 0; k < MAX_PER_ACCOUNT; k++) {
      trials++;
      if (await signIn(u.email, `wrong-${k}`, `198.51.${i % 250}.${k + 1}`)) {
        breaches++;
        examples.push('a wrong password signed in');
      }
    }
    // The account is now full: the right password from yet another address must be refused too.
    trials++;
    if (await signIn(u.email, u.password, `192.0.2.${(i % 250) + 1}`)) {
      breaches++;
      examples.push(`${u.email}: the right password got in after ${MAX_PER_ACCOUNT} failures`);
    }
    const attempts = MAX_PER_ACCOUNT + 1;
    const recorded = await audited(u.email);
    if (recorded < attempts) {
      unaudited += attempts - recorded;
      examples.push(`${u.email}: ${attempts} refused sign-ins, ${recorded} audited`);
    }
  }
  for (let j = 0; j < addresses; j++) {
    const ip = `203.0.113.${(j % 250) + 1}`;
    await env.owner(`DELETE FROM sign_in_failure WHERE ip = $1`, [ip]);
    for (let k = 0; k < MAX_PER_ADDRESS; k++) {
      trials++;
      if (await signIn(`nobody-${j}-${k}-${suffix()}@example.com`, 'wrong', ip)) breaches++;
    }
    const u = await env.newUser('auditor', `bfa${j}`);
    trials++;
    if (await signIn(u.email, u.password, ip)) {
      breaches++;
      examples.push(`address ${ip}: a correct sign-in got through after ${MAX_PER_ADDRESS} failures from it`);
    }
    if ((await audited(u.email)) < 1) {
      unaudited++;
      examples.push(`address ${ip}: the rate-limited sign-in of ${u.email} was not audited`);
    }
  }
  return row(
    `brute force on sign-in: ${MAX_PER_ACCOUNT} wrong passwords per account then the right one from a new address (${accounts} accounts); ${MAX_PER_ADDRESS} failures from one address then a correct sign-in from it (${addresses} addresses)`,
    trials,
    breaches + unaudited,
    `${breaches} sign-ins got through while the window was full, ${unaudited} refused sign-ins without an audit entry${examples.length ? `: ${[...new Set(examples)].slice(0, 4).join(' | ')}` : ''}`,
  );
}

/** 5. Audit: the app role cannot change the trail; an altered row is found at its exact position; audit reads and exports are audited. */
async function auditChecks(env: AbuseEnv, fx: Fixtures, tampers: number, reads: number) {
  const app = new pg.Client({ connectionString: env.appUrl });
  await app.connect();
  const statements = [
    `UPDATE audit_entry SET reason = 'rewritten' WHERE id = (SELECT max(id) FROM audit_entry)`,
    `UPDATE audit_entry SET outcome = 'ok'`,
    `DELETE FROM audit_entry WHERE id = (SELECT min(id) FROM audit_entry)`,
    `DELETE FROM audit_entry`,
    `TRUNCATE audit_entry`,
    `TRUNCATE audit_entry CASCADE`,
    `UPDATE audit_chain_head SET seq = 1`,
    `DELETE FROM audit_chain_head`,
    `TRUNCATE audit_chain_head`,
    `ALTER TABLE audit_entry DISABLE TRIGGER ALL`,
    `SET session_replication_role = replica`,
    `DROP TABLE audit_entry`,
  ];
  let appTrials = 0,
    appSucceeded = 0;
  const appExamples: string[] = [];
  for (const sql of statements) {
    appTrials++;
    try {
      await app.query('BEGIN');
      await app.query(sql);
      appSucceeded++;
      appExamples.push(sql);
    } catch {
      // refused, as it must be
    } finally {
      await app.query('ROLLBACK').catch(() => undefined);
    }
  }
  await app.end();
  // Tamper detection: alter one entry as the owner (with the guard trigger switched off), verify, restore.
  for (let i = 0; i < Math.max(5, tampers); i++) await fx.key(i % 2 ? 'done' : 'unknown');
  const ids = (
    await env.owner<{ id: string }>(`SELECT id::text FROM audit_entry WHERE outcome = 'ok' ORDER BY id`)
  ).map((r) => r.id);
  let tamperTrials = 0,
    missed = 0;
  const tamperExamples: string[] = [];
  const fields = [
    `reason = coalesce(reason, '') || ' (edited)'`,
    `actor_label = 'someone-else@example.com'`,
    `after_state = 'revoked'`,
    `at = at - interval '1 hour'`,
    `ip = '10.0.0.66'`,
  ];
  const ownerClient = new pg.Client({ connectionString: env.ownerUrl });
  await ownerClient.connect();
  const asOwner = async (fn: () => Promise<void>) => {
    await ownerClient.query('BEGIN');
    await ownerClient.query('ALTER TABLE audit_entry DISABLE TRIGGER audit_entry_no_update');
    await fn();
    await ownerClient.query('ALTER TABLE audit_entry ENABLE TRIGGER audit_entry_no_update');
    await ownerClient.query('COMMIT');
  };
  await ownerClient.query('CREATE TEMP TABLE proof_original AS SELECT * FROM audit_entry WITH NO DATA');
  try {
    for (let i = 0; i < tampers; i++) {
      const id = ids[(i * 7919) % ids.length]!;
      const set = fields[i % fields.length]!;
      await asOwner(async () => {
        await ownerClient.query('DELETE FROM proof_original');
        await ownerClient.query('INSERT INTO proof_original SELECT * FROM audit_entry WHERE id = $1', [id]);
        await ownerClient.query(`UPDATE audit_entry SET ${set} WHERE id = $1`, [id]);
      });
      const v = await verifyAuditTrail(env.db);
      tamperTrials++;
      if (v.ok || v.entryId !== id) {
        missed++;
        tamperExamples.push(`entry ${id} (${set}) -> ${v.ok ? 'verified ok' : `reported ${v.entryId}`}`);
      }
      await asOwner(async () => {
        await ownerClient.query(
          `UPDATE audit_entry a SET reason = o.reason, actor_label = o.actor_label, after_state = o.after_state, at = o.at, ip = o.ip FROM proof_original o WHERE a.id = o.id`,
        );
      });
      const back = await verifyAuditTrail(env.db);
      if (!back.ok) {
        missed++;
        tamperExamples.push(`entry ${id}: restoring it did not verify (${back.problem})`);
        break;
      }
    }
  } finally {
    await ownerClient.query('ROLLBACK').catch(() => undefined);
    await ownerClient.end();
  }
  // Reads and exports of the trail: each must leave an entry naming who read it.
  const { GET: exportGet } = await import('@/app/api/console/audit/export/route.ts');
  const auditPageModule = await viewPage(
    import('@/app/api/console/views/audit/route.ts'),
    import('@/app/(console)/audit/audit-view.tsx').then((m) => m.AuditBody),
  );
  let readTrials = 0,
    unauditedReads = 0;
  const count = async (action: string, actorId: string) =>
    Number(
      (
        await env.owner<{ n: string }>(`SELECT count(*) AS n FROM audit_entry WHERE action = $1 AND actor_id = $2`, [
          action,
          actorId,
        ])
      )[0]!.n,
    );
  for (let i = 0; i < reads; i++) {
    const who = i % 2 ? env.users.admin : env.users.auditor;
    const before = await count('audit.export', who.id);
    const res = await exportGet(
      new Request(`http://${HOST}/api/console/audit/export?format=${i % 2 ? 'csv' : 'jsonl'}`, {
        headers: { host: HOST, cookie: await env.cookieFor(who) },
      }),
      undefined as never,
    );
    await res.text();
    readTrials++;
    if ((await count('audit.export', who.id)) <= before) unauditedReads++;
    const pageBefore = await count('audit.read', who.id);
    await renderPage(auditPageModule as never, '/audit', await env.cookieFor(who), {}, { action: 'effect.' });
    readTrials++;
    if ((await count('audit.read', who.id)) <= pageBefore) unauditedReads++;
  }
  return [
    row(
      `audit trail as the application role: ${statements.length} statements (UPDATE, DELETE, TRUNCATE, trigger switch-off, DROP)`,
      appTrials,
      appSucceeded,
      `${appSucceeded} succeeded${appExamples.length ? `: ${appExamples.join(' | ')}` : ''}; every one refused by PostgreSQL (privileges and triggers)`,
    ),
    row(
      `tamper detection: one audit entry altered as the owner (5 kinds of field), then verifyAuditTrail`,
      tamperTrials,
      missed,
      `${tamperTrials - missed} of ${tamperTrials} found at the exact entry id; each restored and re-verified${tamperExamples.length ? `: ${tamperExamples.slice(0, 3).join(' | ')}` : ''}`,
    ),
    row(
      'reads of the audit trail: CSV / JSON Lines exports and renders of the /audit page, each must leave an audit entry (audit.export / audit.read)',
      readTrials,
      unauditedReads,
      `${readTrials - unauditedReads} of ${readTrials} reads found on the trail with the reader's id`,
    ),
  ];
}

/** 6. Secrets: hashed at rest; provider credentials never in logs, responses or stored attempts. */
async function secrets(env: AbuseEnv, n: number) {
  const plaintexts: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = await createRuntimeKey({ db: env.db, actor: SYSTEM }, { name: `secret-${i}`, workflows: ['*'] });
    plaintexts.push(k.token, k.token.split('_').slice(2).join('_'));
    const u = await env.newUser(ROLE_LIST[i % ROLE_LIST.length]!, `pw${i}`);
    plaintexts.push(u.password);
  }
  for (const u of Object.values(env.users)) plaintexts.push(u.password);
  // SMTP with credentials from the environment, against a real SMTP server that demands them.
  const user = `relay-user-${suffix()}`;
  const password = `smtp-pass-${randomUUID()}`;
  let authOk = 0,
    authBad = 0;
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) {
        authOk++;
        cb(null, { user });
      } else {
        authBad++;
        cb(new Error('Invalid username or password'));
      }
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => cb(null, `OK: queued as Q${suffix()}`));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const saved = { u: process.env.SMTP_USER, p: process.env.SMTP_PASSWORD, c: process.env.LEDGER_PROVIDERS };
  const captured: string[] = [];
  const originals = {
    log: console.log,
    error: console.error,
    warn: console.warn,
    info: console.info,
    debug: console.debug,
    out: process.stdout.write,
    err: process.stderr.write,
  };
  const keep = (...args: unknown[]) => {
    captured.push(
      args
        .map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a)))
        .join(' '),
    );
  };
  const responses: string[] = [];
  let sends = 0;
  try {
    process.env.SMTP_USER = user;
    process.env.LEDGER_PROVIDERS = JSON.stringify({
      smtp: { type: 'smtp', host: '127.0.0.1', port, ignoreTLS: true, from: 'proof@example.com', timeoutSeconds: 5 },
    });
    const tool = await makeTool(env.db, { provider: 'smtp' });
    const run = await makeRun(env.db);
    const ledger = createLedger(
      directTransport({
        db: env.db,
        actor: { kind: 'runtime', id: 'proof-smtp', label: 'proof smtp', workflows: ['*'] },
      }),
    );
    console.log = keep;
    console.error = keep;
    console.warn = keep;
    console.info = keep;
    console.debug = keep;
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (originals.out as (...a: unknown[]) => boolean).call(process.stdout, chunk, ...rest);
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return (originals.err as (...a: unknown[]) => boolean).call(process.stderr, chunk, ...rest);
    }) as typeof process.stderr.write;
    for (const [i, pass] of [password, `wrong-${password}`].entries()) {
      process.env.SMTP_PASSWORD = pass;
      resetEnvCache();
      const provider = providerRegistryFromEnv().get('smtp');
      for (let j = 0; j < Math.max(1, Math.floor(n / 2)); j++) {
        sends++;
        try {
          const r = await ledger.send(
            provider,
            {
              run: run.runId,
              tool: tool.name,
              action: 'receipt',
              record: `r-${i}-${j}`,
              target: `to-${i}-${j}-${suffix()}@example.com`,
            },
            { subject: 'hello', text: 'body' },
          );
          responses.push(JSON.stringify(r));
        } catch (error) {
          responses.push(`${(error as Error).message}\n${(error as Error).stack ?? ''}\n${JSON.stringify(error)}`);
        }
      }
    }
  } finally {
    console.log = originals.log;
    console.error = originals.error;
    console.warn = originals.warn;
    console.info = originals.info;
    console.debug = originals.debug;
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
    for (const [k, v] of [
      ['SMTP_USER', saved.u],
      ['SMTP_PASSWORD', saved.p],
      ['LEDGER_PROVIDERS', saved.c],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    resetEnvCache();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  // Scan every table as the owner for any plaintext.
  const tables = (
    await env.owner<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`)
  ).map((r) => r.t);
  const dump: string[] = [];
  for (const t of tables)
    dump.push(...(await env.owner<{ r: string }>(`SELECT x::text AS r FROM "${t}" x`)).map((r) => r.r));
  // Attempt bodies are bytea: decode them too.
  dump.push(
    ...(
      await env
        .owner<{ b: string }>(`SELECT convert_from(body, 'UTF8') AS b FROM attempt WHERE body IS NOT NULL`)
        .catch(() => [])
    ).map((r) => r.b ?? ''),
  );
  const atRest = dump.join('\n');
  const secretsFound = plaintexts.filter((p) => atRest.includes(p));
  const credentialHits = [
    password,
    Buffer.from(password).toString('base64'),
    Buffer.from(`\u0000${user}\u0000${password}`).toString('base64'),
  ].filter((p) => captured.join('\n').includes(p) || responses.join('\n').includes(p) || atRest.includes(p));
  return [
    row(
      `secrets at rest: ${plaintexts.length} plaintexts (runtime-key tokens and their secret parts, user passwords) searched in every row of every table, read as the owner`,
      plaintexts.length,
      secretsFound.length,
      `${secretsFound.length} found in plaintext; runtime keys are stored as SHA-256, passwords as hashes`,
    ),
    row(
      `provider credentials: ${sends} SMTP sends with credentials from SMTP_USER / SMTP_PASSWORD (half with a wrong password), console output, SDK results and errors, and stored attempts searched for the password`,
      sends,
      credentialHits.length,
      `${authOk} authenticated sends, ${authBad} refused logins; ${captured.length} console writes captured; the password (plain or base64) found ${credentialHits.length} times`,
    ),
  ];
}

export async function runSecurity(ctx: ProofContext): Promise<ProofSection> {
  const started = Date.now();
  const full = ctx.scale === 'full';
  const env = await openAbuseEnv(ctx);
  try {
    const fx = new Fixtures(env);
    const rows: ProofRow[] = [];
    const matrix = await authorizationMatrix(env, fx, full ? 2 : 1, ctx.log);
    rows.push(matrix.row);
    const routes = await routeMatrix(env, fx, full ? 5 : 1);
    rows.push(routes.row);
    ctx.log('security: workflow grants matrix');
    const workflows = await workflowMatrix(env, full ? 2 : 1);
    rows.push(workflows.row);
    ctx.log('security: object-level checks');
    rows.push(await objectLevel(env, full ? 60 : 3));
    ctx.log('security: four-eyes');
    rows.push(await fourEyes(env, fx, full ? 40 : 2));
    ctx.log('security: brute force');
    rows.push(await bruteForce(env, full ? 30 : 2, full ? 5 : 1));
    ctx.log('security: audit');
    rows.push(...(await auditChecks(env, fx, full ? 100 : 5, full ? 20 : 2)));
    ctx.log('security: secrets');
    rows.push(...(await secrets(env, full ? 20 : 4)));
    const wronglyRefused = matrix.wronglyRefused + routes.wronglyRefused + workflows.wronglyRefused;
    return {
      title: 'Security: authorization, object scope, four-eyes, brute force, audit, secrets',
      proves: 'Z1-Z6, A2-A5, P2',
      rows,
      notes: [
        `Ran in ${((Date.now() - started) / 1000).toFixed(1)} s. "unauthorized" = a call that succeeded without authority, or a refusal with no audit entry carrying the call's request id.`,
        `Server actions are called directly (not through the UI) through the product guard, with the session cookie, Origin and Sec-Fetch-Site of each condition; ${wronglyRefused} permitted calls were refused.`,
        "The workflow grants matrix gives each cell a fresh person holding the role on one workflow only (the action's, or another that exists), so a call is permitted only when that role may do it there; admin-only actions need an all-workflows grant and are refused in every cell (lib/auth/grants.ts).",
        'A permitted role without an Origin header is allowed (non-browser clients and some same-origin requests send none); a foreign Origin, an opaque (null) Origin or Sec-Fetch-Site: cross-site is refused for every role and audited (lib/auth/request.ts).',
        'The product has no Next middleware (no middleware.ts / proxy.ts): authorization runs in every server action and route handler (Z2), so an x-middleware-subrequest header has nothing to skip; the route handlers were called with it and still refused.',
        'Expired four-eyes requests are simulated by moving expires_at into the past as the owner; tampering switches the audit guard trigger off as the owner, alters one entry, verifies, then restores it.',
      ],
    };
  } finally {
    await env.close();
  }
}

export const proof: ProofPart = runSecurity;
