// Chat webhook routes kept by declarative setup (POST /manage/apply, docs/MANAGE.md): a route the file
// lists is stored and delivers, signed the Standard Webhooks way (checked with the `standardwebhooks`
// package by a local receiver), beside the environment's routes; the same file again changes nothing;
// a route taken out of the list is removed and its queued posts given up; a route named like an
// environment route, a bad url or an unknown event is refused naming the field, nothing written; a
// route whose secret variable the server lacks is stored with a warning in the diff, and its posts
// fail naming the variable. GET /manage/notification-routes lists both homes, for admins only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect } from '../helpers/factories.ts';
import { seenOfKeys } from '../helpers/seen.ts';
import { generateWebhookSecret } from '@/lib/providers/webhook/secret.ts';
import { call, person, type Person } from './manage-support.ts';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}
const received: Received[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    received.push({ path: req.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

const secret = generateWebhookSecret();
process.env.APPLY_ROUTE_SECRET = secret;
delete process.env.APPLY_ROUTE_MISSING_SECRET;
process.env.NOTIFY_WEBHOOK_ROUTES = JSON.stringify({
  'env-ops': { url: `${base}/env`, events: ['approval.waiting'], secretEnv: 'APPLY_ROUTE_SECRET' },
});

let t: TestDatabase;
let admin: Person;
let operator: Person;
const SHA = 'ef'.repeat(32);

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  process.env.DATABASE_URL = t.appUrl;
  (await import('@/lib/env.ts')).resetEnvCache();
  admin = await person(t.db, 'admin');
  operator = await person(t.db, 'operator');
});

type Applied = {
  changes: { kind: string; action: string; name?: string; fields?: string[] }[];
  warnings: string[];
};
const apply = async (routes: unknown, options: { dryRun?: boolean; sha256?: string; who?: Person } = {}) =>
  call('POST', '/apply', options.who ?? admin, {
    document: routes === undefined ? {} : { notificationRoutes: routes },
    sha256: options.sha256 ?? SHA,
    dryRun: options.dryRun ?? false,
  });
const stored = () => t.db.notificationRoute.findMany({ orderBy: { name: 'asc' } });
/** Entries other than token uses: what an apply writes to the trail. */
const trail = async () =>
  (await t.owner<{ n: number }>(`SELECT count(*)::int AS n FROM audit_entry WHERE action <> 'access_token.use'`))
    .rows[0]!.n;

/** An epoch bump that waits for a second operator: approval.waiting, queued for the routes taking it. */
async function approvalWaiting(): Promise<string> {
  const { requestBump } = await import('@/lib/approvals/request-bump.ts');
  const actor = { kind: 'user' as const, id: operator.id, label: operator.email, role: 'operator' as const };
  const e = await makeEffect(t.db, 'done');
  const r = await requestBump(
    { db: t.db, actor },
    { keys: [e.key], reason: 'template fixed', seen: await seenOfKeys(t.db, [e.key]) },
  );
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r.requestId;
}

const chat = { name: 'chat-ops', url: `${base}/chat`, events: ['approval.waiting'], secretEnv: 'APPLY_ROUTE_SECRET' };
const quiet = {
  name: 'no-secret',
  url: `${base}/quiet`,
  events: ['replay.failed'],
  secretEnv: 'APPLY_ROUTE_MISSING_SECRET',
};

describe('notification routes by declarative setup', () => {
  it('a listed route is stored, audited with the file hash, and delivers signed; again: no change; taken out: removed', async () => {
    const before = await trail();
    const dry = await apply([chat, quiet], { dryRun: true });
    expect(dry.status).toBe(200);
    const planned = dry.body as unknown as Applied;
    expect(planned.changes).toEqual([
      { kind: 'notification_route', action: 'create', name: 'chat-ops' },
      { kind: 'notification_route', action: 'create', name: 'no-secret' },
    ]);
    expect(planned.warnings).toEqual([
      "route no-secret: APPLY_ROUTE_MISSING_SECRET is not set (in the server's environment): the route's posts fail until it is fixed",
    ]);
    expect(await stored()).toEqual([]);
    expect(await trail()).toBe(before);

    const applied = await apply([chat, quiet]);
    expect(applied.status).toBe(200);
    expect((applied.body as unknown as Applied).warnings).toHaveLength(1);
    expect((await stored()).map((r) => [r.name, r.url, r.events, r.secretEnv])).toEqual([
      ['chat-ops', `${base}/chat`, ['approval.waiting'], 'APPLY_ROUTE_SECRET'],
      ['no-secret', `${base}/quiet`, ['replay.failed'], 'APPLY_ROUTE_MISSING_SECRET'],
    ]);
    // The secret itself is nowhere in the database: not in the route, not in the trail.
    const leaked = await t.owner<{ n: number }>(
      `SELECT (SELECT count(*) FROM notification_route r WHERE r::text LIKE $1)
            + (SELECT count(*) FROM audit_entry a WHERE a::text LIKE $1) AS n`,
      [`%${secret}%`],
    );
    expect(Number(leaked.rows[0]!.n)).toBe(0);
    const audited = await t.owner<{ action: string; subject: string; sha: string | null }>(
      `SELECT action, subject_id AS subject, detail->>'sha256' AS sha FROM audit_entry
        WHERE subject_type = 'notification_route' ORDER BY id`,
    );
    expect(audited.rows).toEqual([
      { action: 'notification_route.create', subject: 'chat-ops', sha: null },
      { action: 'config.apply', subject: 'chat-ops', sha: SHA },
      { action: 'notification_route.create', subject: 'no-secret', sha: null },
      { action: 'config.apply', subject: 'no-secret', sha: SHA },
    ]);

    // The admin's read lists both homes and which secret this server lacks; nobody else reads URLs.
    const listed = await call('GET', '/notification-routes', admin);
    expect(listed.status).toBe(200);
    expect(
      (listed.body.routes as { name: string; source: string; inUse: boolean; secretProblem: string | null }[]).map(
        (r) => [r.name, r.source, r.inUse, r.secretProblem],
      ),
    ).toEqual([
      ['env-ops', 'environment', true, null],
      ['chat-ops', 'stored', true, null],
      ['no-secret', 'stored', true, 'route no-secret: APPLY_ROUTE_MISSING_SECRET is not set'],
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect((await call('GET', '/notification-routes', operator)).status).toBe(403);

    // The stored route takes the event beside the environment's, and its post verifies.
    const requestId = await approvalWaiting();
    const outbox = await t.db.notificationWebhook.findMany({ where: { subjectId: requestId } });
    expect(outbox.map((w) => w.route).sort()).toEqual(['chat-ops', 'env-ops']);
    const { deliverPendingWebhooks } = await import('@/lib/notifications/webhooks/deliver.ts');
    expect(await deliverPendingWebhooks(t.db, { concurrency: 1 })).toEqual({ sent: 2, retrying: 0, gaveUp: 0 });
    const post = received.find((p) => p.path === '/chat')!;
    const payload = new Webhook(secret).verify(post.body, post.headers) as {
      type: string;
      data: { subjectId: string };
    };
    expect(payload).toMatchObject({ type: 'approval.waiting', data: { subjectId: requestId } });
    expect(received.map((p) => p.path).sort()).toEqual(['/chat', '/env']);

    // A stored route whose secret variable this process lacks fails its post naming the variable, and
    // is retried later (here: an hour), as an environment route's is.
    const { enqueueWebhooks } = await import('@/lib/notifications/webhooks/enqueue.ts');
    const failed = { type: 'replay.failed' as const, workflows: [], title: 'x', text: 'x', link: '/' };
    expect(await enqueueWebhooks(t.db, { ...failed, subjectId: `replay-${requestId}` })).toBe(1);
    expect(await deliverPendingWebhooks(t.db, { backoffBaseSeconds: 3600 })).toEqual({
      sent: 0,
      retrying: 1,
      gaveUp: 0,
    });
    const unsigned = await t.db.notificationWebhook.findFirstOrThrow({ where: { route: 'no-secret' } });
    expect(unsigned).toMatchObject({
      status: 'pending',
      lastError: 'route no-secret: APPLY_ROUTE_MISSING_SECRET is not set',
    });

    // The same file again: nothing to change, nothing audited.
    const atRest = await trail();
    const again = await apply([chat, quiet]);
    expect((again.body as unknown as Applied).changes).toEqual([]);
    expect(await trail()).toBe(atRest);
    // A file without the section leaves the stored routes alone.
    expect(((await apply(undefined)).body as unknown as Applied).changes).toEqual([]);

    // An edit updates the named fields; a route taken out of the list is removed.
    const edited = { ...chat, events: ['approval.waiting', 'approval.approved'], unknownsThreshold: 3 };
    const changed = await apply([edited], { sha256: '12'.repeat(32) });
    expect((changed.body as unknown as Applied).changes).toEqual([
      { kind: 'notification_route', action: 'update', name: 'chat-ops', fields: ['events', 'unknownsThreshold'] },
      { kind: 'notification_route', action: 'remove', name: 'no-secret' },
    ]);
    expect((changed.body as unknown as Applied).warnings).toEqual([]);
    expect((await stored()).map((r) => [r.name, r.events, r.unknownsThreshold])).toEqual([
      ['chat-ops', ['approval.waiting', 'approval.approved'], 3],
    ]);
    const removal = await t.owner<{ action: string; sha: string | null }>(
      `SELECT action, detail->>'sha256' AS sha FROM audit_entry WHERE subject_id = 'no-secret' ORDER BY id`,
    );
    expect(removal.rows).toEqual([
      { action: 'notification_route.create', sha: null },
      { action: 'config.apply', sha: SHA },
      { action: 'notification_route.remove', sha: null },
      { action: 'config.apply', sha: '12'.repeat(32) },
    ]);

    // An empty list removes the last one; a post queued for it is given up, not sent.
    const requestId2 = await approvalWaiting();
    expect((await apply([])).status).toBe(200);
    expect(await stored()).toEqual([]);
    const gaveUp = await deliverPendingWebhooks(t.db, { concurrency: 1 });
    expect(gaveUp).toEqual({ sent: 1, retrying: 0, gaveUp: 1 });
    const rows = await t.db.notificationWebhook.findMany({
      where: { subjectId: requestId2 },
      orderBy: { route: 'asc' },
    });
    expect(rows.map((w) => [w.route, w.status])).toEqual([
      ['chat-ops', 'failed'],
      ['env-ops', 'sent'],
    ]);
  });

  it('a name of an environment route, a bad url, an unknown event or a non-admin is refused naming it; nothing written', async () => {
    const before = await trail();
    const clash = await apply([chat, { ...chat, name: 'env-ops' }]);
    expect(clash.status).toBe(422);
    expect(clash.body.field).toBe('notificationRoutes.1.name');
    expect(JSON.stringify(clash.body)).toContain('env-ops');
    expect(JSON.stringify(clash.body)).toContain('NOTIFY_WEBHOOK_ROUTES');

    const badUrl = await apply([{ ...chat, url: 'ftp://hooks.example.com/x' }]);
    expect(badUrl.status).toBe(422);
    expect(badUrl.body.field).toBe('document.notificationRoutes.0.url');
    const badEvent = await apply([{ ...chat, events: ['approval.waiting', 'run.exploded'] }]);
    expect(badEvent.status).toBe(422);
    expect(badEvent.body.field).toBe('document.notificationRoutes.0.events.1');
    const badSecretName = await apply([{ ...chat, secretEnv: 'not a variable' }]);
    expect(badSecretName.body.field).toBe('document.notificationRoutes.0.secretEnv');
    const twice = await apply([chat, chat]);
    expect(twice.status).toBe(422);
    expect(twice.body.field).toBe('document.notificationRoutes');

    expect((await apply([chat], { who: operator })).status).toBe(403);
    expect(await stored()).toEqual([]);
    // Only the operator's refusal is recorded (A4); the refused documents wrote nothing.
    expect(await trail()).toBe(before + 1);
  });
});
