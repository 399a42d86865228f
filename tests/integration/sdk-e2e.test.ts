// The SDK end to end against the sandbox provider, over the HTTP API (route handlers in process)
// and over the direct transport: crash between call and receipt, retried runs, the reworded replay.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLedger,
  httpTransport,
  ProviderRejected,
  defineTool,
  type Ledger,
  type Transport,
} from '@/lib/sdk/index.ts';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { SandboxProvider, startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { markUnknown } from '@/lib/ledger/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeTool, reconcilerActor, runtimeActor } from '../helpers/factories.ts';
import { BASE, makeKey, routeFetch, useApiDb } from './api-support.ts';

let t: TestDatabase;
let sandbox: Sandbox;
let provider: SandboxProvider;
let token: string;
let toolName: string;
let http: Ledger;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  sandbox = await startSandbox();
  provider = new SandboxProvider(sandbox.url);
  token = (await makeKey(t.db, ['welcome'])).token;
  toolName = (await makeTool(t.db, { leaseSeconds: 120 })).name;
  http = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: routeFetch }));
});
afterAll(async () => {
  await sandbox?.stop();
});

/** A transport whose process dies once `dead()` is true: every later call throws, like a crash. */
function dying(inner: Transport, dead: () => boolean): Transport {
  const wrap = <F extends (...args: never[]) => Promise<unknown>>(f: F) =>
    (async (...args: Parameters<F>) => {
      if (dead()) throw new Error('process crashed');
      return f(...args);
    }) as F;
  return Object.fromEntries(Object.entries(inner).map(([k, f]) => [k, wrap(f as never)])) as unknown as Transport;
}

interface Customer {
  customerId: string;
  email: string;
  subject: string;
  body: string;
}
const welcome = () =>
  defineTool<Customer>({
    name: toolName,
    action: 'campaign_welcome',
    targetType: 'email',
    generated: ['subject', 'body'],
    identity: (a) => ({ record: a.customerId, target: a.email }),
  });

async function sendAll(ledger: Ledger, runId: string, customers: Customer[]) {
  const tool = welcome();
  const results = [];
  for (const c of customers) {
    results.push(
      await ledger.tool(
        tool,
        runId,
        c,
        ({ idempotencyKey, key, epoch, signal, args }) =>
          provider.send(
            { key, epoch, idempotencyKey, target: args.email, payload: { subject: args.subject, body: args.body } },
            signal,
          ),
        { provider },
      ),
    );
  }
  return results;
}

const customers = (prefix: string, n: number, subject = 'Welcome aboard'): Customer[] =>
  Array.from({ length: n }, (_, i) => ({
    customerId: `${prefix}-cust-${i}`,
    email: `${prefix}${i}@example.com`,
    subject,
    body: `Hello ${prefix} ${i}, glad to have you.`,
  }));

describe('SDK end to end against the sandbox', () => {
  it('S1, S4: a crash between the provider call and the receipt leaves the key pending until its lease, then the reconciler marks it unknown; a retried run does not send again', async () => {
    const triggerId = `evt-${randomUUID()}`;
    const run = await http.createRun({ workflow: 'welcome', triggerId });
    let sent = false;
    const crashing = createLedger(
      dying(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: routeFetch }), () => sent),
    );
    const [c] = customers('crash', 1);
    await expect(
      crashing.tool(welcome(), run.runId, c!, async ({ idempotencyKey, key, epoch, args }) => {
        const raw = await provider.send({
          key,
          epoch,
          idempotencyKey,
          target: args.email,
          payload: { subject: args.subject, body: args.body },
        });
        sent = true; // the process dies right after the provider accepted
        return raw;
      }),
    ).rejects.toThrow('process crashed');
    expect(sandbox.deliveriesTo(c!.email)).toHaveLength(1);
    const effect = await t.db.effect.findFirstOrThrow({ where: { key: { contains: 'crash0%40example.com' } } });
    expect(effect.state).toBe('pending');
    expect(effect.leaseExpiresAt!.getTime()).toBeGreaterThan(Date.now());

    // Inside the lease a retried run (same trigger) loses the claim and skips: no second email.
    const retry = await http.createRun({ workflow: 'welcome', triggerId });
    const [skipped] = await sendAll(http, retry.runId, [c!]);
    expect(skipped).toMatchObject({ status: 'skipped', state: 'pending' });

    // The lease runs out; a reconciler pass finds it and marks it unknown (S4: never retried by itself).
    await t.owner(`UPDATE effect SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [effect.id]);
    const expired = await t.db.effect.findMany({
      where: { state: 'pending', awaitingClaim: false, leaseExpiresAt: { lt: new Date() } },
    });
    expect(expired.map((e) => e.id)).toContain(effect.id);
    for (const e of expired)
      await markUnknown(
        { db: t.db, actor: reconcilerActor() },
        { key: e.key, epoch: e.epoch, evidence: { why: 'lease expired without a receipt' } },
      );
    expect((await t.db.effect.findUniqueOrThrow({ where: { id: effect.id } })).state).toBe('unknown');
    const transitions = await t.db.effectTransition.findMany({
      where: { effectId: effect.id },
      orderBy: { id: 'asc' },
    });
    expect(transitions.map((x) => `${x.fromState}->${x.toState}:${x.actorKind}`)).toEqual([
      'null->pending:runtime',
      'pending->unknown:reconciler',
    ]);

    const replay = await http.replay(retry.runId);
    expect(replay.status).toBe(409);
    const again = await sendAll(http, retry.runId, [c!]);
    expect(again[0]).toMatchObject({ status: 'skipped', state: 'unknown' });
    expect(sandbox.deliveriesTo(c!.email)).toHaveLength(1);
  });

  it('K1: a retried run skips what is done and sends only what is missing', async () => {
    const triggerId = `evt-${randomUUID()}`;
    const list = customers('retry', 6);
    const first = await http.createRun({ workflow: 'welcome', triggerId });
    const r1 = await sendAll(http, first.runId, list.slice(0, 4));
    expect(r1.map((r) => r.status)).toEqual(['done', 'done', 'done', 'done']);
    const second = await http.createRun({ workflow: 'welcome', triggerId });
    const r2 = await sendAll(http, second.runId, list);
    expect(r2.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped', 'done', 'done']);
    for (const c of list) expect(sandbox.deliveriesTo(c.email)).toHaveLength(1);
  });

  it('K1, K4: the "Anna gets two emails" case: the replay rewords subject and body, the key is the same and Anna gets one email', async () => {
    const triggerId = `evt-${randomUUID()}`;
    const anna: Customer = {
      customerId: 'cust-anna',
      email: 'Anna.Schmidt@Example.com',
      subject: 'Welcome to Acme, Anna!',
      body: 'Hi Anna, thanks for signing up.',
    };
    const run = await http.createRun({ workflow: 'welcome', triggerId });
    const [first] = await sendAll(http, run.runId, [anna]);
    expect(first!.status).toBe('done');
    const replay = await http.createRun({ workflow: 'welcome', triggerId });
    const reworded: Customer = {
      ...anna,
      email: ' anna.schmidt@EXAMPLE.com ',
      subject: 'Anna, your Acme account is ready',
      body: 'Hello Anna! We are thrilled you joined Acme.',
    };
    const [second] = await sendAll(http, replay.runId, [reworded]);
    expect(second).toMatchObject({ status: 'skipped', key: first!.key, epoch: 1, state: 'done' });
    expect(sandbox.deliveriesTo('anna.schmidt@example.com')).toHaveLength(1);
    expect(sandbox.deliveriesTo('anna.schmidt@example.com')[0]!.subject).toBe('Welcome to Acme, Anna!');
  });

  it('S3, S4: a thrown call is unknown, never failed; a ProviderRejected is failed and frees the key', async () => {
    const run = await http.createRun({ workflow: 'welcome', triggerId: `evt-${randomUUID()}` });
    const thrown = await http.effect(
      { run: run.runId, tool: toolName, action: 'campaign_welcome', record: 'r1', target: 'boom@example.com' },
      async () => {
        throw new Error('socket hang up');
      },
    );
    expect(thrown.status).toBe('unknown');
    const rejected = await http.effect(
      { run: run.runId, tool: toolName, action: 'campaign_welcome', record: 'r2', target: 'no@example.com' },
      async () => {
        throw new ProviderRejected('address suppressed', { code: 'suppressed' });
      },
    );
    expect(rejected.status).toBe('failed');
    const again = await http.effect(
      { run: run.runId, tool: toolName, action: 'campaign_welcome', record: 'r2', target: 'no@example.com' },
      async () => ({ status: 201, headers: [], body: new TextEncoder().encode('{"id":"x-1"}') }),
    );
    expect(again).toMatchObject({ status: 'done', receipt: 'x-1' });
  });

  it('Z6: the direct transport gives the same answers as HTTP (same operations, authorization and shapes)', async () => {
    const direct = createLedger(directTransport({ db: t.db, actor: runtimeActor(['welcome']) }));
    const triggerId = `evt-${randomUUID()}`;
    const run = await direct.createRun({ workflow: 'welcome', triggerId });
    const [a] = await sendAll(direct, run.runId, customers('direct', 1));
    expect(a!.status).toBe('done');
    const viaHttp = await http.readRun(run.runId);
    const viaDirect = await direct.readRun(run.runId);
    expect(viaDirect).toEqual(viaHttp);
    const outsider = createLedger(directTransport({ db: t.db, actor: runtimeActor(['other']) }));
    await expect(outsider.readRun(run.runId)).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    await expect(direct.createRun({ workflow: '', triggerId: 'x' })).rejects.toMatchObject({
      status: 422,
      field: 'workflow',
    });
    await expect(direct.readRun('not-a-uuid')).rejects.toMatchObject({ status: 422, field: 'runId' });
  });

  it('V1, V2: reporting a deletion through the SDK revokes the key and returns the deterministic successor id, the same on a repeated report', async () => {
    const run = await http.createRun({ workflow: 'welcome', triggerId: `evt-${randomUUID()}` });
    const [sent] = await sendAll(http, run.runId, customers('del', 1));
    if (sent!.status !== 'done') throw new Error('expected done');
    const deletion = await http.reportDeletion({
      key: sent!.key,
      epoch: sent!.epoch,
      objectId: sent!.receipt,
      deletedAt: '2026-11-30T12:00:00Z',
    });
    expect(deletion.state).toBe('revoked');
    const again = await http.reportDeletion({ key: sent!.key, epoch: sent!.epoch, objectId: sent!.receipt });
    expect(again.successorId).toBe(deletion.successorId);
    expect((await http.readRun(run.runId)).targets[0]).toMatchObject({ state: 'revoked' });
  });
});
