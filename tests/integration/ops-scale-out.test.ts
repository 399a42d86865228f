// Issue 17, item 4: PostgreSQL + PgBouncer (transaction mode) + 2 web processes + 2 workers, as
// docs/DEPLOYMENT.md lays them out (web processes through PgBouncer, workers direct). Through both web
// processes: 50 concurrent claims of one key, exactly one winner (S1); an agent's run whose plan has
// 1,100 targets, 100 of them sent and reported done by the agent. Then a forced replay of the 1,000
// pending targets with the leading worker killed (SIGKILL) half-way: every pending target is delivered
// exactly once at the sandbox provider and nothing else is sent. A claim whose answer died with the
// worker ends unknown (S4: the sandbox offers no lookup by idempotency key); support checks the
// provider and resolves it as sent (with the provider's message id) or not sent, and a second replay
// sends the latter, which is the documented procedure. Also: the runtime-key failure limit is per web
// process (docs/DEPLOYMENT.md): each refuses a source after its own 20 failures.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type PgBoss from 'pg-boss';
import { createDb, type Db } from '@/lib/db/client.ts';
import { approvePlan, resolveUnknown } from '@/lib/ledger/index.ts';
import { DOOR_MAX_FAILURES } from '@/lib/ops/door-limiter.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { getReplayProgress, installJobEngine, requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { userActor } from '../helpers/factories.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { scriptEnv, startScript, TSX, type Started } from '../helpers/processes.ts';
import { makeKey } from './api-support.ts';
import { until } from './replay-fixtures.ts';

const PENDING = 1_000;
const SENT_BY_AGENT = 100;

let t: TestDatabase;
let bouncer: PgBouncer;
let pooled: Db;
let sandbox: Sandbox;
let sender: PgBoss | undefined;
const started: Started[] = [];
const web: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  await installJobEngine(t.ownerUrl);
  const server = new URL(inject('ownerUrl'));
  bouncer = await startPgBouncer(
    { host: server.hostname, port: Number(server.port) },
    { [inject('appUser')]: inject('appPassword') },
  );
  pooled = createDb(bouncer.through(t.appUrl), 8);
  sandbox = await startSandbox();
  // Two web processes serving the agent API's route handlers, each with its own pool through PgBouncer.
  const servers = [0, 1].map(() =>
    startScript(
      ['--import', TSX, 'scripts/bench/sdk-http-server.ts', bouncer.through(t.appUrl), '8'],
      scriptEnv({ NODE_ENV: 'test' }),
    ),
  );
  started.push(...servers);
  for (const s of servers) {
    await s.waitFor(/"url":"[^"]+"/);
    web.push(JSON.parse(/\{"url":"[^"]+"\}/.exec(s.output())![0]).url as string);
  }
}, 240_000);

afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  await sender?.stop({ graceful: false });
  await pooled?.$disconnect();
  await sandbox?.stop();
  await bouncer?.stop();
});

function worker(name: string): Started {
  const s = startScript(
    ['--import', TSX, 'scripts/worker.ts'],
    scriptEnv({
      NODE_ENV: 'test',
      DATABASE_URL: t.appUrl, // direct: the leader and chunk locks are session advisory locks
      REPLAY_CONCURRENCY: '2',
      RECONCILE_INTERVAL_SECONDS: '1',
      LEDGER_PROVIDERS: JSON.stringify({ sandbox: { type: 'sandbox', url: sandbox.url } }),
      OTEL_SERVICE_NAME: name,
    }),
  );
  started.push(s);
  return s;
}

const call = (base: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('2 web processes and 2 workers through PgBouncer in transaction mode', () => {
  it(
    'S1: 50 concurrent claims of one key over both web processes: one winner, one effect row',
    { timeout: 180_000 },
    async () => {
      const token = (await makeKey(t.db)).token;
      const tool = await t.db.toolDefinition.create({
        data: {
          name: `race_${Date.now()}`,
          actions: ['notify'],
          targetType: 'email',
          provider: 'sandbox',
          generatedInputs: [],
        },
      });
      const run = (await (await call(web[0]!, '/runs', token, { workflow: 'race', triggerId: 'race-1' })).json()) as {
        runId: string;
      };
      const body = { runId: run.runId, tool: tool.name, action: 'notify', recordId: 'r-1', target: 'race@example.com' };
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call(web[i % 2]!, '/effects/claim', token, body)),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(49);
      const rows = await t.owner<{ n: number }>(
        `SELECT count(*)::int AS n FROM effect e JOIN effect_key k ON k.key = e.key WHERE k.run_id = $1`,
        [run.runId],
      );
      expect(rows.rows[0]!.n).toBe(1);
    },
  );

  it(
    `a forced replay of ${PENDING} pending targets, the leading worker killed half-way: each delivered exactly once, nothing else`,
    { timeout: 600_000 },
    async () => {
      const operator = userActor('operator');
      const support = userActor('support');
      const token = (await makeKey(t.db)).token;
      const tool = await t.db.toolDefinition.create({
        data: {
          name: `scale_${Date.now()}`,
          actions: ['notify'],
          targetType: 'email',
          provider: 'sandbox',
          generatedInputs: ['subject', 'body'],
          fourEyesReplay: false,
          supportsReceiptLookup: true,
          supportsIdempotencyKey: true,
          // A dead worker's claim is looked up soon after it dies, and a miss is final at once.
          leaseSeconds: 5,
          settleWindowSeconds: 0,
        },
      });
      // The agent, through the web processes: the run and its plan, then 100 targets sent and reported.
      const created = await call(web[0]!, '/runs', token, { workflow: 'scale', triggerId: `scale-${Date.now()}` });
      expect(created.status).toBe(201);
      const { runId } = (await created.json()) as { runId: string };
      const items = Array.from({ length: PENDING + SENT_BY_AGENT }, (_, i) => ({
        tool: tool.name,
        action: 'notify',
        recordId: `r-${i}`,
        target: `user${i}@scale.example.com`,
      }));
      const planned = await call(web[1]!, `/runs/${runId}/plan`, token, { items });
      expect(planned.status).toBe(201);
      const plan = (await planned.json()) as { planId: string; itemsHash: string };
      await approvePlan({ db: pooled, actor: operator }, { planId: plan.planId, itemsHash: plan.itemsHash });
      const agentSent = items.slice(0, SENT_BY_AGENT);
      const pending = items.slice(SENT_BY_AGENT);
      for (let k = 0; k < agentSent.length; k += 10) {
        await Promise.all(
          agentSent.slice(k, k + 10).map(async (item, j) => {
            const base = web[(k + j) % 2]!;
            const claim = await call(base, '/effects/claim', token, { runId, ...item });
            expect(claim.status).toBe(201);
            const c = (await claim.json()) as { key: string; epoch: number; attemptId: string };
            const done = await call(base, '/effects/outcome', token, {
              key: c.key,
              epoch: c.epoch,
              attemptId: c.attemptId,
              outcome: 'done',
              receipt: `agent-${item.recordId}`,
            });
            expect(done.status).toBe(200);
          }),
        );
      }

      // Two workers; the first started leads (rescue, sweep, reconciler).
      const a = worker('worker-a');
      await a.waitFor('leadership acquired');
      const b = worker('worker-b');
      await Promise.all([a.waitFor(' ready: '), b.waitFor(' ready: ')]);
      expect(a.output()).toContain('leadership acquired');

      sender = await startBoss(t.appUrl);
      const replayOnce = async (count: number) => {
        const r = await requestReplay({ db: pooled, actor: operator }, { runId, confirmCount: count, reason: 'scale' });
        await startReplay({ db: pooled, actor: operator, jobs: sender! }, { replayId: r.replayId });
        return r.replayId;
      };
      const first = await replayOnce(PENDING);
      await until('half of the targets delivered', async () => sandbox.deliveries.length >= PENDING / 2, 300_000);
      a.child.kill('SIGKILL');
      await a.exited;
      const atKill = sandbox.deliveries.length;
      expect(atKill).toBeLessThan(PENDING); // killed half-way, not after the end
      await b.waitFor('leadership acquired');
      await until(
        'the first replay to complete',
        async () => (await getReplayProgress({ db: pooled }, { replayId: first })).status === 'completed',
        300_000,
      );
      // Nothing stays pending: the reconciler (now in b) decides every claim the dead worker left. The
      // sandbox has no lookup by idempotency key, so a claim whose answer died with the worker is
      // unknown (S4), sent or not.
      const open = async () =>
        (
          await t.owner<{ key: string; state: string; epoch: number; target: string }>(
            `SELECT key, target, state::text AS state, current_epoch AS epoch FROM effect_key WHERE run_id = $1 AND state::text NOT IN ('done')`,
            [runId],
          )
        ).rows;
      await until('no key of the run pending', async () => (await open()).every((k) => k.state !== 'pending'), 120_000);
      const undecided = await open();
      expect(undecided.every((k) => k.state === 'unknown')).toBe(true);
      // Support asks the provider about each: delivered (resolved sent, with the provider's message id)
      // or not (resolved not sent, then replayed).
      let notSent = 0;
      for (const k of undecided) {
        const found = sandbox.deliveriesTo(k.target);
        expect(found.length).toBeLessThanOrEqual(1);
        const ref = { key: k.key, epoch: k.epoch };
        if (found[0]) {
          await resolveUnknown(
            { db: pooled, actor: support },
            { ...ref, outcome: 'sent', receipt: found[0].messageId, reason: 'the provider shows the message' },
          );
        } else {
          notSent++;
          await resolveUnknown(
            { db: pooled, actor: support },
            { ...ref, outcome: 'not_sent', reason: 'the provider has no such message' },
          );
        }
      }
      if (notSent) {
        const second = await replayOnce(notSent);
        await until(
          'the second replay to complete',
          async () => (await getReplayProgress({ db: pooled }, { replayId: second })).status === 'completed',
          120_000,
        );
      }

      // Every pending target exactly once at the provider; the agent's 100 never; nothing else.
      const byTarget = new Map<string, number>();
      for (const d of sandbox.deliveries) byTarget.set(d.to, (byTarget.get(d.to) ?? 0) + 1);
      for (const item of pending) expect(byTarget.get(item.target), item.target).toBe(1);
      for (const item of agentSent) expect(byTarget.get(item.target)).toBeUndefined();
      expect(sandbox.deliveries).toHaveLength(PENDING);
      const states = await t.owner<{ state: string; n: number }>(
        `SELECT state::text AS state, count(*)::int AS n FROM effect_key WHERE run_id = $1 GROUP BY 1`,
        [runId],
      );
      expect(states.rows).toEqual([{ state: 'done', n: PENDING + SENT_BY_AGENT }]);
      console.log(
        `[scale-out] killed at ${atKill}/${PENDING} deliveries; ${undecided.length} claim(s) left unknown by the dead worker, ${notSent} of them not sent (sent by a second replay)`,
      );
      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(0);
    },
  );

  it(
    `Z6: the runtime-key failure limit is per web process: each refuses a source after its own ${DOOR_MAX_FAILURES}`,
    { timeout: 180_000 },
    async () => {
      const source = { 'x-forwarded-for': '203.0.113.99' };
      const bad = 'elk_notakey_xxxxxxxxxxxxxxxxxxxxxxxx';
      const audited = async () =>
        (
          await t.owner<{ n: number }>(
            `SELECT count(*)::int AS n FROM audit_entry WHERE outcome = 'refused' AND ip = '203.0.113.99'`,
          )
        ).rows[0]!.n;
      const body = { workflow: 'wf', triggerId: 'door' };
      for (const base of web) {
        for (let i = 0; i < DOOR_MAX_FAILURES; i++)
          expect((await call(base, '/runs', bad, body, source)).status).toBe(401);
        const limited = await call(base, '/runs', bad, body, source);
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      // N processes: at most N x the limit audited per window, then nothing more from that source.
      expect(await audited()).toBe(web.length * DOOR_MAX_FAILURES);
      expect((await call(web[0]!, '/runs', bad, body, source)).status).toBe(429);
      expect(await audited()).toBe(web.length * DOOR_MAX_FAILURES);
    },
  );
});
