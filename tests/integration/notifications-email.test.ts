// Notification email through the real SMTP server the tests use, and the replay hooks
// through the real replay worker: the outbox is sent off the request path, once per notification
// even with two workers, retried with backoff after a refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simpleParser } from 'mailparser';
import type PgBoss from 'pg-boss';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { deliverPendingEmails } from '@/lib/notifications/email-outbox.ts';
import { notificationEmailProvider } from '@/lib/notifications/schedule.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import '@/lib/providers/sandbox/register.ts';
import {
  approveReplay,
  getReplayProgress,
  installJobEngine,
  requestReplay,
  startBoss,
  startReplay,
  startReplayWorker,
  type ReplayWorker,
} from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { doneKeys, makePerson, toldAbout } from './notifications-fixtures.ts';
import { makeCampaign, until } from './replay-fixtures.ts';

const BASE = 'https://ledger.example.test';
process.env.NOTIFY_EMAIL_PROVIDER = 'notify';
process.env.NEXTAUTH_URL = BASE;
resetEnvCache();

let t: TestDatabase;
let smtp: TestSmtpServer;
let worker: ReplayWorker;
let sender: PgBoss;
let providers: ProviderRegistry;
let sandbox: Sandbox;

const smtpSettings = (port: number, from: string) =>
  ({ type: 'smtp', host: '127.0.0.1', port, ignoreTLS: true, from, timeoutSeconds: 5 }) as const;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 30 });
  await installJobEngine(t.ownerUrl);
  smtp = await startTestSmtpServer({ keepRaw: true });
  sandbox = await startSandbox();
  // "smtp" delivers one replay, "sandbox" refuses the other's recipients, "notify" sends notifications.
  providers = new ProviderRegistry({
    smtp: smtpSettings(smtp.port, 'campaigns@example.com'),
    sandbox: { type: 'sandbox', url: sandbox.url },
    notify: smtpSettings(smtp.port, 'ledger@example.com'),
  });
  worker = await startReplayWorker({
    appUrl: t.appUrl,
    db: t.db,
    providers,
    concurrency: 2,
    reconcileIntervalMs: 60_000,
  });
  sender = await startBoss(t.appUrl);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await sender?.stop({ graceful: false });
  await providers?.close();
  await smtp?.close();
  await sandbox?.stop();
});

const notify = () => notificationEmailProvider(providers, 'notify')!;
const deliver = (extra: { backoffBaseSeconds?: number } = {}) =>
  deliverPendingEmails(t.db, { provider: notify(), baseUrl: BASE, ...extra });
const toAddress = (address: string) => smtp.messages.filter((m) => m.to.includes(address.toLowerCase()));

describe('notification email', () => {
  it('a waiting request becomes an email at the SMTP server to each approver who wants email, with a link to the request', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const carol = await makePerson(t.db, 'operator', { prefs: { 'approval.waiting': 'inbox' } });
    const r = await requestBump({ db: t.db, actor: alice }, { keys: await doneKeys(t.db, 1), reason: 'template fix' });
    if (r.mode !== 'requested') throw new Error('expected a request');
    expect(toAddress(bob.label)).toHaveLength(0); // nothing is sent on the request path
    await deliver();
    const [mail, ...more] = toAddress(bob.label);
    expect(more).toHaveLength(0);
    expect(mail!.from).toBe('ledger@example.com');
    const parsed = await simpleParser(mail!.raw!);
    // The link opens the notification (marked read on the way) and leads to the request.
    const note = await t.db.notification.findFirstOrThrow({ where: { userId: bob.id, kind: 'approval.waiting' } });
    expect(note.link).toBe(`/approvals#approval-${r.requestId}`);
    expect(parsed.text).toContain(`Open it in the console: ${BASE}/inbox/open/${note.id}`);
    expect(parsed.subject).toBe('Epoch bump of 1 key waits for your approval');
    expect(toAddress(carol.label)).toHaveLength(0);
    expect(toAddress(alice.label)).toHaveLength(0);
    const again = await deliver();
    expect(again.sent).toBe(0);
    expect(toAddress(bob.label)).toHaveLength(1);
  });

  it('two workers sending the outbox at once send each notification exactly once', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    for (let i = 0; i < 12; i++)
      await requestBump({ db: t.db, actor: alice }, { keys: await doneKeys(t.db, 1), reason: `batch ${i}` });
    const second = new ProviderRegistry({ notify: smtpSettings(smtp.port, 'ledger@example.com') });
    const results = await Promise.all([
      deliverPendingEmails(t.db, { provider: notify(), baseUrl: BASE, batch: 5 }),
      deliverPendingEmails(t.db, { provider: notificationEmailProvider(second, 'notify')!, baseUrl: BASE, batch: 5 }),
      deliverPendingEmails(t.db, { provider: notify(), baseUrl: BASE, batch: 5 }),
    ]);
    await until('the outbox to drain', async () => (await deliver()).sent === 0);
    await second.close();
    expect(results.reduce((n, r) => n + r.sent, 0)).toBeGreaterThan(0);
    const ids = toAddress(bob.label).map((m) => m.messageId);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
  });

  it('a refused connection is retried after a backoff, then sent once', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    await smtp.refuseConnections();
    try {
      await requestBump({ db: t.db, actor: alice }, { keys: await doneKeys(t.db, 1), reason: 'retry me' });
      const first = await deliver({ backoffBaseSeconds: 600 });
      expect(first.retrying).toBeGreaterThanOrEqual(1);
      const row = await t.db.notificationEmail.findFirstOrThrow({ where: { toAddress: bob.label } });
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row.lastError).toMatch(/SMTP/);
      expect(row.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 500_000);
    } finally {
      await smtp.acceptConnections();
    }
    expect((await deliver()).sent).toBe(0); // still waiting out its backoff
    await t.owner(`UPDATE notification_email SET next_attempt_at = now() WHERE to_address = $1`, [bob.label]);
    await deliver();
    expect(toAddress(bob.label)).toHaveLength(1);
    const row = await t.db.notificationEmail.findFirstOrThrow({ where: { toAddress: bob.label } });
    expect(row).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('the requester hears that the replay request was approved, and that the replay finished or failed', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const ctx = (actor = alice) => ({ db: t.db, actor, jobs: sender });
    const ends: string[] = [];
    sandbox.failNext('reject', { times: 2 });
    for (const provider of ['smtp', 'sandbox']) {
      const c = await makeCampaign(t.db, { not_sent: 2 }, { provider });
      const req = await requestReplay(ctx(), { runId: c.runId, confirmCount: 2, reason: `replay on ${provider}` });
      expect(await toldAbout(t.db, req.approvalRequestId!, 'approval.waiting')).toContain(bob.id);
      await approveReplay(ctx(bob), { approvalRequestId: req.approvalRequestId!, setHash: req.setHash });
      expect(await toldAbout(t.db, req.approvalRequestId!, 'approval.approved')).toEqual([alice.id]);
      await startReplay(ctx(), { replayId: req.replayId });
      await until(`replay on ${provider} to complete`, async () => {
        const p = await getReplayProgress({ db: t.db }, { replayId: req.replayId });
        return p.status === 'completed';
      });
      const [n] = await t.db.notification.findMany({ where: { subjectId: req.replayId, userId: alice.id } });
      ends.push(`${n?.kind}: ${n?.title}`);
    }
    expect(ends[0]).toBe('replay.finished: Your replay of 2 targets finished');
    expect(ends[1]).toBe('replay.failed: Your replay finished with 2 failed and 0 unknown targets');
    await deliver();
    const subjects = await Promise.all(toAddress(alice.label).map(async (m) => (await simpleParser(m.raw!)).subject));
    expect(subjects).toContain('Your replay of 2 targets finished');
    expect(subjects).toContain('Your replay finished with 2 failed and 0 unknown targets');
  }, 240_000);
});
