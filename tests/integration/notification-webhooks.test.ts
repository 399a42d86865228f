// Notifications that reach chat: per route, signed the Standard Webhooks way and checked here with the
// `standardwebhooks` package, queued in the transaction of the event, retried with backoff from the
// outbox the workers run; a Slack-compatible route gets `text` and blocks with a link into the console.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, suffix } from '../helpers/factories.ts';
import { seenOfKeys } from '../helpers/seen.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { generateWebhookSecret } from '@/lib/providers/webhook/secret.ts';
import { insertUser } from '@/lib/auth/users.ts';
import type { Actor } from '@/lib/ledger/index.ts';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}
const received: Received[] = [];
let failNext = 0;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({
      path: req.url ?? '',
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
      body: Buffer.concat(chunks).toString('utf8'),
    });
    if (req.url === '/gone') res.writeHead(410).end('this hook was removed');
    else if (failNext > 0) {
      failNext--;
      res.writeHead(503).end('busy');
    } else res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

const secret = generateWebhookSecret();
process.env.TEST_CHAT_SECRET = secret;
process.env.NOTIFY_WEBHOOK_ROUTES = JSON.stringify({
  ops: { url: `${base}/ops`, secretEnv: 'TEST_CHAT_SECRET', unknownsThreshold: 2 },
  chat: { url: `${base}/slack`, format: 'slack', events: ['approval.waiting'], secretEnv: 'TEST_CHAT_SECRET' },
  gone: { url: `${base}/gone`, events: ['replay.failed'], secretEnv: 'TEST_CHAT_SECRET' },
});
process.env.NEXTAUTH_URL = 'https://ledger.example.com';
resetEnvCache();

const t = await createTestDatabase({ poolSize: 6 });
const { requestBump } = await import('@/lib/approvals/request-bump.ts');
const { decideBump } = await import('@/lib/approvals/decide-bump.ts');
const { checkWebhookEvents } = await import('@/lib/notifications/webhooks/checks.ts');
const { deliverPendingWebhooks } = await import('@/lib/notifications/webhooks/deliver.ts');

const system: Actor = { kind: 'system', id: 'test', label: 'test setup' };
async function operator(): Promise<Actor & { kind: 'user' }> {
  const email = `op-${suffix()}@example.com`;
  const u = await insertUser(t.db, { email, name: 'Op', role: 'operator', password: 'a-long-enough-password' }, system);
  return { kind: 'user', id: u.id, label: email, role: 'operator' };
}
const verify = (r: Received) => new Webhook(secret).verify(r.body, r.headers) as Record<string, unknown>;
const outbox = () => t.db.notificationWebhook.findMany({ orderBy: { createdAt: 'asc' } });

/** Worker passes until no webhook is left to post (a retry with no backoff is due at once), summed. */
async function drain(options: Parameters<typeof deliverPendingWebhooks>[1]) {
  const total = { sent: 0, retrying: 0, gaveUp: 0 };
  for (let pass = 0; pass < 50; pass++) {
    const r = await deliverPendingWebhooks(t.db, options);
    total.sent += r.sent;
    total.retrying += r.retrying;
    total.gaveUp += r.gaveUp;
    if ((await t.db.notificationWebhook.count({ where: { status: { in: ['pending', 'sending'] } } })) === 0) break;
  }
  return total;
}

describe('chat webhooks', () => {
  it('approval waiting and decided, unknowns past the threshold and a broken audit chain reach their routes, signed; a failed post is retried with the same id', async () => {
    const [alice, bob] = [await operator(), await operator()];
    const e = await makeEffect(t.db, 'done');
    const r = await requestBump(
      { db: t.db, actor: alice },
      { keys: [e.key], reason: 'template fixed', seen: await seenOfKeys(t.db, [e.key]) },
    );
    if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
    // Queued with the request itself: both routes take approval.waiting.
    expect((await outbox()).map((w) => [w.route, w.eventType])).toEqual(
      [
        ['ops', 'approval.waiting'],
        ['chat', 'approval.waiting'],
      ].sort(() => 0),
    );
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'approve', seenStatus: 'open' },
    );

    // One unknown is under the route's threshold of 2; the second makes one alert, and only one.
    await makeEffect(t.db, 'unknown');
    expect(await checkWebhookEvents(t.db)).toBe(0);
    await makeEffect(t.db, 'unknown');
    expect(await checkWebhookEvents(t.db)).toBe(1);
    expect(await checkWebhookEvents(t.db)).toBe(0);
    await t.owner(
      `INSERT INTO audit_verification (id, up_to_id, checked_at, full_at, ok, broken_entry_id, broken_chain, broken_seq, problem)
       VALUES (1, 10, now(), now(), false, 7, 'run:x', 3, 'hash does not match the entry')
       ON CONFLICT (id) DO UPDATE SET ok = false, broken_chain = 'run:x', broken_seq = 3, problem = 'hash does not match the entry'`,
    );
    expect(await checkWebhookEvents(t.db)).toBe(1);
    expect(await checkWebhookEvents(t.db)).toBe(0);

    // The receiver is busy for the first post: it is retried (backoff 0 here), with the same webhook-id.
    failNext = 1;
    expect(await drain({ backoffBaseSeconds: 0, concurrency: 1 })).toEqual({ sent: 5, retrying: 1, gaveUp: 0 });
    expect((await outbox()).every((w) => w.status === 'sent')).toBe(true);
    expect(received).toHaveLength(6);
    expect(received[0]!.headers['webhook-id']).toBe(received[5]!.headers['webhook-id']);

    // Every post verifies with the route's secret; a changed body does not.
    for (const post of received) verify(post);
    expect(() => verify({ ...received[0]!, body: received[0]!.body.replace('}', ',"x":1}') })).toThrow();
    const ops = received
      .slice(1)
      .filter((p) => p.path === '/ops')
      .map((p) => verify(p));
    expect(ops.map((p) => p.type).sort()).toEqual([
      'approval.approved',
      'approval.waiting',
      'audit.verification_failed',
      'unknowns.appeared',
    ]);
    const approved = ops.find((p) => p.type === 'approval.approved')!;
    expect(approved.data).toMatchObject({
      subjectId: r.requestId,
      url: `https://ledger.example.com/approvals#approval-${r.requestId}`,
    });
    expect((approved.data as { text: string }).text).toContain(`Approved by ${bob.label}`);
    expect(ops.find((p) => p.type === 'unknowns.appeared')!.data).toMatchObject({ count: 2 });
    expect(ops.find((p) => p.type === 'audit.verification_failed')!.data).toMatchObject({ chain: 'run:x', seq: 3 });

    const slack = received.filter((p) => p.path === '/slack').map((p) => verify(p));
    expect(slack).toHaveLength(1);
    expect(slack[0]).toMatchObject({ text: expect.stringContaining('waits for a second operator') });
    expect(JSON.stringify(slack[0]!.blocks)).toContain(
      `<https://ledger.example.com/approvals#approval-${r.requestId}|Open in the console>`,
    );
  });

  it('a receiver that refuses (4xx) is given up at once; one that stays down is given up after the attempt limit', async () => {
    const before = received.length;
    const payload = { type: 'replay.failed', timestamp: 'now', data: { title: 't', text: 'x', url: 'u' } };
    await t.db.notificationWebhook.createMany({
      data: [
        { route: 'ops', eventType: 'replay.failed', subjectId: 'down', payload },
        { route: 'gone', eventType: 'replay.failed', subjectId: 'gone', payload },
      ],
    });
    failNext = 10;
    expect(await drain({ backoffBaseSeconds: 0, maxAttempts: 3, concurrency: 1 })).toEqual({
      sent: 0,
      retrying: 2,
      gaveUp: 2,
    });
    failNext = 0;
    expect(received.length - before).toBe(4);
    const rows = await t.db.notificationWebhook.findMany({
      where: { eventType: 'replay.failed' },
      orderBy: { subjectId: 'asc' },
    });
    expect(rows.map((w) => [w.subjectId, w.status, w.attempts, w.responseStatus])).toEqual([
      ['down', 'failed', 3, 503],
      ['gone', 'failed', 1, 410],
    ]);
  });
});
