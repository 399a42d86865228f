// Bad input (issue 6): every agent API endpoint, every console server action and every console route
// handler gets seeded, generated malformed input (wrong types, missing and extra fields, huge strings,
// Unicode edge cases, SQL and HTML injection strings, invalid targets, bad numbers, broken JSON).
// Each answer must be a 4xx with a JSON error naming the field; no table the app can change may
// change (per-table row count and content hash read as the owner, refusal audit rows excepted). Then
// hostile strings that ARE valid input are stored and the console pages that show them are rendered:
// the payloads must come out escaped.
import '../support/abuse-als.ts';
import { randomUUID } from 'node:crypto';
import * as schemas from '@/lib/api/schemas.ts';
import { runParams } from '@/lib/api/params.ts';
import { approvePlanInput, resolveUnknownInput } from '@/lib/ledger/index.ts';
import { decideInput } from '@/lib/approvals/decide-bump.ts';
import { requestBumpInput } from '@/lib/approvals/request-bump.ts';
import { createUserInput, updateUserInput } from '@/lib/auth/users.ts';
import { createRuntimeKeyInput, revokeRuntimeKeyInput, saveToolInput } from '@/lib/auth/admin-commands.ts';
import {
  approveReplayInput,
  cancelReplayInput,
  rejectReplayInput,
  replayControlInput,
  requestReplayInput,
} from '@/lib/replay/index.ts';
import { makeKey, post, routeFetch, BASE } from '@/tests/integration/api-support.ts';
import { makeRun } from '@/tests/helpers/factories.ts';
import type { ProofContext, ProofPart, ProofRow, ProofSection } from '../section.ts';
import { changedTables, HOST, openAbuseEnv, pooled, rng, type AbuseEnv, type Who } from '../support/abuse-env.ts';
import { Fixtures } from '../support/abuse-fixtures.ts';
import {
  generateCases,
  namesField,
  HTML_INJECTION,
  INVALID_EMAILS,
  SQL_INJECTION,
  UNICODE_EDGES,
  WRONG_TYPES,
  type GeneratedCase,
} from '../support/abuse-input.ts';
import { renderEscapingCheck, renderMalformedPages } from '../support/abuse-render.tsx';
import { z } from 'zod';

type Answer = { status: number; field?: unknown; body: string };

interface Target {
  /** Report group: 'agent API', 'server actions', 'console routes'. */
  group: string;
  name: string;
  cases: (GeneratedCase & { semantic?: boolean })[];
  send(c: GeneratedCase): Promise<Answer>;
}

const SEED = 20261130;
// Path ids as a router would hand them over (decoded): a lone surrogate cannot travel in a URL at all.
const uuidish = [
  'not-a-uuid',
  '00000000-0000-0000-0000-00000000000g',
  '1 OR 1=1',
  `'; DROP TABLE run; --`,
  '<script>alert(1)</script>',
  '\u202Eevil',
  '%00',
  '..%2F..%2Fetc%2Fpasswd',
  'x'.repeat(3000),
  '😀',
  '\u0000',
];

// Every error answer, agent API or console route, is a problem document naming the field at its top.
function textAnswer(status: number, body: string): Answer {
  let field: unknown;
  try {
    field = (JSON.parse(body) as { field?: unknown }).field;
  } catch {
    field = undefined;
  }
  return { status, field, body };
}

async function readAll(res: Response): Promise<{ status: number; text: string }> {
  try {
    return { status: res.status, text: await res.text() };
  } catch (error) {
    // A stream that fails after the headers went out is a server error whatever the status said.
    return { status: 599, text: `stream failed: ${(error as Error).message}` };
  }
}

async function buildTargets(env: AbuseEnv, fx: Fixtures, perTarget: (group: string) => number): Promise<Target[]> {
  const random = rng(SEED);
  const token = (await makeKey(env.db)).token;
  const tool = await fx.tool();
  const run = await makeRun(env.db);
  const claimed = (await (
    await post(
      '/effects/claim',
      { runId: run.runId, tool: tool.name, action: 'campaign_welcome', recordId: 'r0', target: 'base@example.com' },
      { token },
    )
  ).json()) as { key: string; attemptId: string };
  const api = (
    name: string,
    path: string | ((id: string) => string),
    template: Record<string, unknown>,
    schema: z.ZodType,
    targetFields?: Record<string, 'email'>,
  ): Target => {
    const n = perTarget('agent API');
    const cases: Target['cases'] = generateCases({ template, schema, targetFields, json: true }, n, random);
    const send = async (c: GeneratedCase) => {
      const raw = c.raw ?? (c.value === undefined ? '' : JSON.stringify(c.value));
      const p = typeof path === 'string' ? path : path(run.runId);
      const { status, text } = await readAll(
        await post(p, undefined, { token, raw, idempotencyKey: `bad-${randomUUID()}` }),
      );
      return textAnswer(status, text);
    };
    return { group: 'agent API', name, cases, send };
  };
  const claimTemplate = {
    runId: run.runId,
    tool: tool.name,
    action: 'campaign_welcome',
    recordId: 'r2',
    target: 'q@example.com',
  };
  const targets: Target[] = [
    api('POST /runs', '/runs', { workflow: 'wf_fuzz', triggerId: 'evt_fuzz' }, schemas.createRunBody),
    api(
      'POST /runs/{id}/plan',
      (id) => `/runs/${id}/plan`,
      { items: [{ tool: tool.name, action: 'campaign_welcome', recordId: 'r1', target: 'p@example.com' }] },
      schemas.submitPlanBody,
      { 'items.0.target': 'email' },
    ),
    api('POST /effects/claim', '/effects/claim', claimTemplate, schemas.claimBody, { target: 'email' }),
    api(
      'POST /effects/outcome',
      '/effects/outcome',
      { key: claimed.key, epoch: 1, attemptId: claimed.attemptId, outcome: 'done', receipt: 'msg' },
      schemas.outcomeBody,
    ),
    api(
      'POST /effects/deletion',
      '/effects/deletion',
      { key: claimed.key, epoch: 1, objectId: 'obj-1' },
      schemas.deletionBody,
    ),
    api(
      'POST /attempts/{id}/response',
      `/attempts/${claimed.attemptId}/response`,
      { status: 200, headers: [['content-type', 'text/plain']], bodyBase64: 'aGk=' },
      schemas.attemptResponseBody,
    ),
    api('POST /runs/{id}/replay', (id) => `/runs/${id}/replay`, {}, schemas.replayBody),
  ];
  // Semantic cases the schema cannot see: unregistered tools and actions, unknown ids and keys.
  const claimTarget = targets[2]!;
  const semantic = Math.max(4, Math.round(perTarget('agent API') / 6));
  for (let i = 0; i < semantic; i++) {
    claimTarget.cases.push({
      value: { ...claimTemplate, tool: `unregistered_${i}` },
      label: 'unregistered tool',
      field: 'tool',
      kind: 'type',
      semantic: true,
    });
    claimTarget.cases.push({
      value: { ...claimTemplate, action: `unregistered_${i}` },
      label: 'unregistered action',
      field: 'action',
      kind: 'type',
      semantic: true,
    });
    claimTarget.cases.push({
      value: { ...claimTemplate, runId: randomUUID() },
      label: 'unknown run',
      field: 'runId',
      kind: 'type',
      semantic: true,
    });
    targets[3]!.cases.push({
      value: { key: `no-such-key-${i}`, epoch: 1, attemptId: claimed.attemptId, outcome: 'done', receipt: 'm' },
      label: 'unknown key',
      field: 'key',
      kind: 'type',
      semantic: true,
    });
    targets[4]!.cases.push({
      value: { key: `no-such-key-${i}`, epoch: 1, objectId: 'o' },
      label: 'unknown key',
      field: 'key',
      kind: 'type',
      semantic: true,
    });
  }
  // Path parameters: GET /runs/{runId} and POST .../plan with malformed ids.
  const params: Target = {
    group: 'agent API',
    name: 'path parameters (runId, attemptId)',
    cases: uuidish.flatMap((v) => [
      { value: v, label: `GET /runs/${JSON.stringify(v).slice(0, 20)}`, field: 'runId', kind: 'type' as const },
      {
        value: v,
        label: `POST /attempts/${JSON.stringify(v).slice(0, 20)}/response`,
        field: 'attemptId',
        kind: 'type' as const,
      },
    ]),
    send: async (c) => {
      const id = encodeURIComponent(c.value as string);
      const res =
        c.field === 'runId'
          ? await routeFetch(`${BASE}/api/v1/runs/${id}`, { headers: { authorization: `Bearer ${token}` } })
          : await post(`/attempts/${id}/response`, { status: 200, headers: [], bodyBase64: '' }, { token });
      const { status, text } = await readAll(res);
      return textAnswer(status, text);
    },
  };
  if (
    !refusedAll(
      runParams,
      params.cases.map((c) => ({ runId: c.value })),
    )
  )
    throw new Error('a path parameter case is a valid uuid');
  targets.push(params);
  // Headers: a malformed Idempotency-Key on an otherwise valid claim.
  targets.push({
    group: 'agent API',
    name: 'Idempotency-Key header',
    cases: ['', 'has space', 'x'.repeat(256), 'a\tb', 'é', 'ab\u007f', 'ü'.repeat(10)].map((v) => ({
      value: v,
      label: `Idempotency-Key ${JSON.stringify(v).slice(0, 20)}`,
      field: 'Idempotency-Key',
      kind: 'type' as const,
    })),
    send: async (c) => {
      const headers = new Headers({ 'content-type': 'application/json', authorization: `Bearer ${token}` });
      headers.set('idempotency-key', c.value as string);
      const res = await routeFetch(`${BASE}/api/v1/effects/claim`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...claimTemplate, recordId: `idem-${randomUUID()}` }),
      });
      const { status, text } = await readAll(res);
      return textAnswer(status, text);
    },
  });

  // Server actions, each called as a role that may run it, so input validation is what is tested.
  const { ledger, admin, replay } = await actions();
  const plan = await fx.submittedPlan();
  const done = await fx.key('done');
  const unknown = await fx.key('unknown');
  const bump = await fx.bumpRequest();
  const awaiting = await fx.replay('awaiting_approval');
  const approvedRun = await fx.approvedRun();
  const keyRow = await fx.runtimeKeyRow();
  const someone = await env.newUser('support', 'target-user');
  const wrongHash = 'f'.repeat(64);
  const action = (
    name: string,
    who: Who,
    call: (input: unknown) => Promise<{ ok: boolean; code?: string; field?: string }>,
    template: Record<string, unknown>,
    schema: z.ZodType,
    semantic: Record<string, unknown>[] = [],
  ): Target => {
    const cases: Target['cases'] = generateCases({ template, schema }, perTarget('server actions'), random);
    for (const s of semantic)
      cases.push({
        value: { ...template, ...s },
        label: `semantic ${Object.keys(s).join(',')}`,
        field: Object.keys(s)[0]!,
        kind: 'type',
        semantic: true,
      });
    return {
      group: 'server actions',
      name,
      cases,
      send: async (c) => {
        const r = await env.as(who, () => call(c.value));
        const status = r.ok
          ? 200
          : r.code === 'internal'
            ? 500
            : r.code === 'validation'
              ? 422
              : r.code === 'not_found'
                ? 404
                : r.code === 'forbidden'
                  ? 403
                  : r.code === 'unauthenticated'
                    ? 401
                    : 409;
        return { status, field: r.ok ? undefined : r.field, body: JSON.stringify(r).slice(0, 300) };
      },
    };
  };
  targets.push(
    action(
      'approvePlanAction',
      'operator',
      ledger.approvePlanAction,
      { planId: plan.planId, itemsHash: plan.itemsHash, reason: 'ok' },
      approvePlanInput,
      [{ planId: randomUUID() }, { itemsHash: wrongHash }],
    ),
    action(
      'revokeAction',
      'operator',
      ledger.revokeAction,
      { keys: [done.key], reason: 'customer asked' },
      z.strictObject({
        keys: z.array(z.string().min(1).max(4096)).min(1).max(10_000),
        reason: z.string().trim().min(1).max(2000),
      }),
      [{ keys: ['no-such-key'] }],
    ),
    action(
      'resolveUnknownAction',
      'support',
      ledger.resolveUnknownAction,
      { key: unknown.key, outcome: 'sent', receipt: 'msg_9', reason: 'seen in provider log' },
      resolveUnknownInput,
      [{ key: 'no-such-key' }],
    ),
    action(
      'requestBumpAction',
      'operator',
      ledger.requestBumpAction,
      { keys: [done.key], reason: 'resend' },
      requestBumpInput,
      [{ keys: ['no-such-key'] }],
    ),
    action(
      'decideBumpAction',
      'operator',
      ledger.decideBumpAction,
      { requestId: bump.requestId, setHash: bump.setHash, decision: 'approve' },
      decideInput,
      [{ requestId: randomUUID() }, { setHash: wrongHash }],
    ),
    action(
      'createUserAction',
      'admin',
      admin.createUserAction,
      {
        email: `new-${randomUUID().slice(0, 8)}@example.com`,
        name: 'New',
        role: 'support',
        password: 'another-long-password',
      },
      createUserInput,
      [{ email: env.users.auditor.email }],
    ),
    action(
      'updateUserAction',
      'admin',
      admin.updateUserAction,
      { userId: someone.id, role: 'auditor', reason: 'moved team' },
      updateUserInput,
      [{ userId: randomUUID() }, { userId: env.users.admin.id, role: 'support' }],
    ),
    action(
      'createRuntimeKeyAction',
      'admin',
      admin.createRuntimeKeyAction,
      { name: `k-${randomUUID().slice(0, 8)}`, workflows: '*' },
      createRuntimeKeyInput,
    ),
    action(
      'revokeRuntimeKeyAction',
      'admin',
      admin.revokeRuntimeKeyAction,
      { keyId: keyRow.id, reason: 'rotated' },
      revokeRuntimeKeyInput,
      [{ keyId: randomUUID() }],
    ),
    action(
      'requestReplayAction',
      'operator',
      replay.requestReplayAction,
      { runId: approvedRun, confirmCount: 1, reason: 'crashed run' },
      requestReplayInput,
      [{ runId: randomUUID() }, { confirmCount: 7 }],
    ),
    action(
      'approveReplayAction',
      'operator',
      replay.approveReplayAction,
      { approvalRequestId: awaiting.approvalRequestId!, setHash: awaiting.setHash },
      approveReplayInput,
      [{ approvalRequestId: randomUUID() }, { setHash: wrongHash }],
    ),
    action(
      'rejectReplayAction',
      'operator',
      replay.rejectReplayAction,
      { approvalRequestId: awaiting.approvalRequestId!, reason: 'wrong run' },
      rejectReplayInput,
      [{ approvalRequestId: randomUUID() }],
    ),
    action(
      'startReplayAction',
      'operator',
      replay.startReplayAction,
      { replayId: awaiting.replayId },
      replayControlInput,
      [{ replayId: randomUUID() }],
    ),
    action(
      'pauseReplayAction',
      'operator',
      replay.pauseReplayAction,
      { replayId: awaiting.replayId },
      replayControlInput,
      [{ replayId: randomUUID() }],
    ),
    action(
      'resumeReplayAction',
      'operator',
      replay.resumeReplayAction,
      { replayId: awaiting.replayId },
      replayControlInput,
      [{ replayId: randomUUID() }],
    ),
    action(
      'cancelReplayAction',
      'operator',
      replay.cancelReplayAction,
      { replayId: awaiting.replayId, reason: 'not now' },
      cancelReplayInput,
      [{ replayId: randomUUID() }],
    ),
    action(
      'saveToolAction',
      'admin',
      admin.saveToolAction,
      {
        name: `tool_${randomUUID().slice(0, 8)}`,
        actions: 'a',
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: 'subject',
      },
      saveToolInput,
    ),
  );
  // startReplay / pause / resume on a replay awaiting approval are state conflicts, not malformed input:
  // only the schema-refused cases and the unknown ids above are sent to them.

  // Console route handlers (GET): malformed path ids and filters.
  const { progress, exportRoute } = await routes();
  const auditorCookie = await env.cookieFor(env.users.auditor);
  const consoleGet = (url: string, handler: (req: Request, ctx: never) => Promise<Response>, ctx: unknown) =>
    handler(new Request(url, { headers: { host: HOST, cookie: auditorCookie } }), ctx as never);
  targets.push({
    group: 'console routes',
    name: 'GET /api/console/replays/{id}/progress',
    cases: uuidish.map((v) => ({
      value: v,
      label: `replayId ${JSON.stringify(v).slice(0, 20)}`,
      field: 'replayId',
      kind: 'type' as const,
    })),
    send: async (c) => {
      const { status, text } = await readAll(
        await consoleGet(
          `http://${HOST}/api/console/replays/${encodeURIComponent(c.value as string)}/progress`,
          progress,
          { params: Promise.resolve({ replayId: c.value }) },
        ),
      );
      return textAnswer(status, text);
    },
  });
  const filterValues: [string, string][] = [
    ['from', 'not-a-date'],
    ['to', '2026-13-45T99:99'],
    ['from', '<script>alert(1)</script>'],
    ['outcome', 'maybe'],
    ['outcome', `' OR 1=1 --`],
    ['action', 'x\u0000y'],
    ['actor', '\u0000'],
    ['target', 'a\u0000@example.com'],
    ['run', 'x\u0000'],
    ['from', '\uD800'],
    ['to', '1e309'],
    ['format', 'xml'],
  ];
  targets.push({
    group: 'console routes',
    name: 'GET /api/console/audit/export',
    cases: filterValues.map(([k, v]) => ({
      value: [k, v],
      label: `${k}=${JSON.stringify(v).slice(0, 24)}`,
      field: k,
      kind: 'type' as const,
    })),
    send: async (c) => {
      const [k, v] = c.value as [string, string];
      const q = new URLSearchParams({ format: 'csv', [k]: v });
      const { status, text } = await readAll(
        await consoleGet(`http://${HOST}/api/console/audit/export?${q}`, exportRoute, undefined),
      );
      return textAnswer(status, text);
    },
  });
  return targets;
}

function refusedAll(schema: z.ZodType, values: unknown[]): boolean {
  return values.every((v) => !schema.safeParse(v).success);
}

async function actions() {
  return {
    ledger: await import('@/app/actions/ledger.ts'),
    admin: await import('@/app/actions/admin.ts'),
    replay: await import('@/app/actions/replay.ts'),
  };
}

async function routes() {
  return {
    progress: (await import('@/app/api/console/replays/[replayId]/progress/route.ts')).GET as unknown as (
      req: Request,
      ctx: never,
    ) => Promise<Response>,
    exportRoute: (await import('@/app/api/console/audit/export/route.ts')).GET as unknown as (
      req: Request,
      ctx: never,
    ) => Promise<Response>,
  };
}

interface Tally {
  trials: number;
  non4xx: string[];
  twoxx: number;
  fivexx: number;
  unnamed: string[];
  semantic: number;
  statuses: Map<number, number>;
}

export async function runBadInput(ctx: ProofContext): Promise<ProofSection> {
  const started = Date.now();
  const full = ctx.scale === 'full';
  const env = await openAbuseEnv(ctx);
  try {
    const fx = new Fixtures(env);
    // Full: 7 POST bodies x 700 + 17 actions x 330 + fixed cases = over 10,000. Reduced: about 300.
    const targets = await buildTargets(env, fx, (group) =>
      group === 'agent API' ? (full ? 700 : 14) : full ? 330 : 9,
    );
    const all = targets.flatMap((t) => t.cases.map((c) => ({ t, c })));
    ctx.log(`bad input: ${all.length} cases over ${targets.length} entry points`);
    const tallies = new Map<string, Tally>();
    const tallyOf = (group: string) => {
      let x = tallies.get(group);
      if (!x)
        tallies.set(
          group,
          (x = { trials: 0, non4xx: [], twoxx: 0, fivexx: 0, unnamed: [], semantic: 0, statuses: new Map() }),
        );
      return x;
    };
    const stateChanges: string[] = [];
    const chunk = full ? 400 : 60;
    const refusalsBefore = Number(
      (await env.owner<{ n: string }>(`SELECT count(*) AS n FROM audit_entry WHERE outcome = 'refused'`))[0]!.n,
    );
    for (let i = 0; i < all.length; i += chunk) {
      const slice = all.slice(i, i + chunk);
      const before = await env.fingerprint();
      const answers = await pooled(slice, 6, async ({ t, c }) => {
        try {
          return await t.send(c);
        } catch (error) {
          return { status: 598, field: undefined, body: `threw: ${(error as Error).message}` } satisfies Answer;
        }
      });
      const after = await env.fingerprint();
      const changed = changedTables(before, after);
      if (changed.length) {
        // Find the case: replay the chunk one at a time against a per-case fingerprint.
        let found = 0;
        for (const { t, c } of slice) {
          const b = await env.fingerprint();
          await t.send(c).catch(() => undefined);
          const moved = changedTables(b, await env.fingerprint());
          if (moved.length) {
            found++;
            stateChanges.push(`${t.name} [${c.label}] changed ${moved.join(', ')}`);
          }
        }
        if (!found)
          stateChanges.push(`cases ${i}-${i + slice.length} changed ${changed.join(', ')} (not reproduced one by one)`);
      }
      slice.forEach(({ t, c }, j) => {
        const a = answers[j]!;
        const x = tallyOf(t.group);
        x.trials++;
        if ((c as { semantic?: boolean }).semantic) x.semantic++;
        x.statuses.set(a.status, (x.statuses.get(a.status) ?? 0) + 1);
        if (a.status < 400 || a.status >= 500) {
          if (a.status < 300) x.twoxx++;
          else x.fivexx++;
          x.non4xx.push(`${t.name} [${c.label}] -> ${a.status} ${a.body.slice(0, 160)}`);
        } else if (!(c as { semantic?: boolean }).semantic && !namesField(c.field, a.field)) {
          x.unnamed.push(
            `${t.name} [${c.label}] -> ${a.status} field=${JSON.stringify(a.field)} (expected ${c.field})`,
          );
        }
      });
      ctx.log(`bad input: ${Math.min(i + chunk, all.length)}/${all.length}`);
    }
    const refusalsAfter = Number(
      (await env.owner<{ n: string }>(`SELECT count(*) AS n FROM audit_entry WHERE outcome = 'refused'`))[0]!.n,
    );
    const rows: ProofRow[] = [];
    for (const [group, x] of tallies) {
      const codes = [...x.statuses.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ');
      const changes = stateChanges.filter((s) => targets.some((t) => t.group === group && s.startsWith(t.name))).length;
      rows.push({
        tried: `${group}: generated malformed input on ${targets
          .filter((t) => t.group === group)
          .map((t) => t.name)
          .join(', ')}`,
        trials: x.trials,
        lost: 0,
        duplicated: 0,
        unauthorized: x.non4xx.length + changes,
        observed:
          `statuses ${codes}; ${x.trials - x.unnamed.length - x.semantic} of ${x.trials - x.semantic} schema-refused cases named the mutated field` +
          `${x.semantic ? `; ${x.semantic} semantic cases (unknown ids, unregistered tools, wrong hashes)` : ''}; ${changes} changed a row` +
          (x.non4xx.length ? `; not 4xx: ${x.non4xx.slice(0, 3).join(' | ')}` : '') +
          (x.unnamed.length ? `; field not named: ${x.unnamed.slice(0, 3).join(' | ')}` : ''),
      });
    }
    const unattributed = stateChanges.filter((s) => s.startsWith('cases ')).length;
    if (unattributed)
      rows.push({
        tried: 'state changes not attributable to one case',
        trials: unattributed,
        lost: 0,
        duplicated: 0,
        unauthorized: unattributed,
        observed: stateChanges.filter((s) => s.startsWith('cases ')).join(' | '),
      });

    const render = await renderEscapingCheck(env, fx, {
      payloads: [
        ...HTML_INJECTION,
        ...SQL_INJECTION.slice(0, 3),
        ...UNICODE_EDGES.filter((u) => !u.includes('\u0000')).slice(0, 6),
      ],
      full,
    });
    rows.push(render.row);
    rows.push(await renderMalformedPages(env, (await makeRun(env.db)).runId, { full }));
    rows.push(await signInCases(env, full));
    const total = rows.reduce((n, r) => n + (r.tried.startsWith('state changes') ? 0 : r.trials), 0);
    return {
      title: 'Bad input: malformed input on every endpoint and action',
      proves: 'K3, Z5, S7, A4, Z2 (4xx naming the field, nothing written), console output escaped',
      rows,
      notes: [
        `${total.toLocaleString('en-US')} cases in ${((Date.now() - started) / 1000).toFixed(1)} s, generated from seed ${SEED} (scripts/proof/support/abuse-input.ts): each case changes one thing in a valid input and is sent only if the product's own zod schema refuses it (or, for targets, normalization does; unknown ids and hashes are marked semantic).`,
        'Agent API: the route handlers of app/api/v1 called in-process with real Request objects and a real runtime key. Server actions: called directly as a role that may run them (tests/integration/console-authz.test.ts does the same), through the product guard.',
        `"unauthorized" counts answers that were not 4xx (2xx or 5xx) plus cases that changed a row: every table the app role can write is fingerprinted as the owner (row count + md5 of the rows) before and after each chunk of ${chunk}; audit rows with outcome refused (and their chain heads) and runtime_key.last_used_at (authentication bookkeeping, once a minute) are excluded, so recorded refusals are allowed (${refusalsAfter - refusalsBefore} were written).`,
        ...render.notes,
        ...(stateChanges.length ? [`State changes: ${stateChanges.slice(0, 10).join(' | ')}`] : []),
      ],
    };
  } finally {
    await env.close();
  }
}

/**
 * The credentials sign-in (next-auth's authorize in lib/auth/options.ts) with malformed emails and
 * passwords: each attempt must be refused with the form's own message, never get in, never surface
 * an internal error (next-auth hands a thrown message back to the sign-in page). Failed sign-ins
 * are recorded by design (rate limit and audit), so this runs outside the row fingerprint.
 */
async function signInCases(env: AbuseEnv, full: boolean): Promise<ProofRow> {
  const { authOptions } = await import('@/lib/auth/options.ts');
  const provider = authOptions().providers[0] as unknown as {
    options: { authorize: (c: Record<string, unknown>, req: unknown) => Promise<unknown> };
  };
  const values: unknown[] = [
    ...WRONG_TYPES,
    ...SQL_INJECTION,
    ...HTML_INJECTION,
    ...UNICODE_EDGES,
    ...INVALID_EMAILS,
    'x'.repeat(100_000),
    undefined,
  ];
  const victim = env.users.auditor;
  const allowed = new Set(['Email or password is not right.', 'Enter your email and password.']);
  const random = rng(SEED + 1);
  const cases: { email: unknown; password: unknown; label: string }[] = [];
  for (const v of values) {
    cases.push({ email: v, password: 'whatever-password', label: `email=${JSON.stringify(v)?.slice(0, 20)}` });
    cases.push({ email: victim.email, password: v, label: `password=${JSON.stringify(v)?.slice(0, 20)}` });
  }
  while (full && cases.length < 400)
    cases.push({
      email: values[Math.floor(random() * values.length)],
      password: values[Math.floor(random() * values.length)],
      label: 'random pair',
    });
  let signedIn = 0,
    internal = 0,
    limited = 0;
  const examples: string[] = [];
  for (const [i, c] of cases.entries()) {
    try {
      await provider.options.authorize(
        { email: c.email, password: c.password },
        { headers: { 'x-forwarded-for': `198.18.${Math.floor(i / 250)}.${i % 250}` } },
      );
      signedIn++;
      examples.push(`${c.label}: signed in`);
    } catch (error) {
      const message = (error as Error).message;
      if (message.startsWith('Too many failed sign-ins')) limited++;
      else if (!allowed.has(message)) {
        internal++;
        examples.push(`${c.label}: ${message.slice(0, 100)}`);
      }
    }
  }
  return {
    tried:
      'sign-in (credentials) with malformed emails and passwords: wrong types, injection strings, Unicode edge cases, invalid and huge addresses',
    trials: cases.length,
    lost: 0,
    duplicated: 0,
    unauthorized: signedIn + internal,
    observed: `${signedIn} signed in, ${internal} answered with something other than the form's own message, ${limited} refused by the per-account rate limit${examples.length ? `: ${examples.slice(0, 4).join(' | ')}` : ''}`,
  };
}

export const proof: ProofPart = runBadInput;
