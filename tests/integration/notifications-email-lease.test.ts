// The email outbox's leases, through the real SMTP server the tests use: a row is leased only when a
// lane is free to send it, so a lease cannot lapse while the row waits its turn and let a second worker
// send it too; a row whose sends keep dying is given up after the last allowed attempt; and an email to
// a person disabled since it was queued is not sent.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverPendingEmails } from '@/lib/notifications/email-outbox.ts';
import { notificationEmailProvider } from '@/lib/notifications/schedule.ts';
import type { SendRequest } from '@/lib/sdk/provider.ts';
import { ProviderRegistry, type RegisteredProvider } from '@/lib/providers/registry.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startTestSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.ts';
import { makePerson } from './notifications-fixtures.ts';

const BASE = 'https://ledger.example.test';
let t: TestDatabase;
let smtp: TestSmtpServer;
let providers: ProviderRegistry;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 10 });
  smtp = await startTestSmtpServer();
  providers = new ProviderRegistry({
    notify: { type: 'smtp', host: '127.0.0.1', port: smtp.port, ignoreTLS: true, from: 'ledger@example.com' },
  });
}, 60_000);

afterAll(async () => {
  await providers?.close();
  await smtp?.close();
});

const notify = () => notificationEmailProvider(providers, 'notify')!;

/** An outbox row for a new notification to the person; `ageSeconds` orders the rows (oldest first). */
async function queued(person: { id: string; label: string }, ageSeconds: number, row: object = {}): Promise<string> {
  const n = await t.db.notification.create({
    data: {
      userId: person.id,
      kind: 'approval.waiting',
      subjectId: randomUUID(),
      title: `waiting ${ageSeconds}`,
      body: 'A request waits for you.',
      link: '/approvals',
    },
  });
  await t.db.notificationEmail.create({
    data: {
      notificationId: n.id,
      toAddress: person.label,
      nextAttemptAt: new Date(Date.now() - ageSeconds * 1000),
      ...row,
    },
  });
  return n.id;
}

const messagesTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address.toLowerCase()));

describe('notification email leases', () => {
  it('a row waiting its turn is not leased yet, so another worker that takes over lapsed leases does not make it go out twice', async () => {
    const bob = await makePerson(t.db, 'operator');
    const ids = [await queued(bob, 30), await queued(bob, 20), await queued(bob, 10)];

    // Worker A sends one at a time; its first send waits until the test lets it go on.
    const real = notify();
    let inFlight: string | undefined;
    let goOn!: () => void;
    const held = new Promise<void>((resolve) => (goOn = resolve));
    const slow: RegisteredProvider = {
      name: real.name,
      supportsIdempotencyKey: real.supportsIdempotencyKey,
      supportsReceiptLookup: real.supportsReceiptLookup,
      classify: (raw) => real.classify(raw),
      lookup: (receipt, signal) => real.lookup(receipt, signal),
      async send(request: SendRequest) {
        if (inFlight === undefined) {
          inFlight = request.key.replace('notification:', '');
          await held;
        }
        return real.send(request);
      },
    };
    const a = deliverPendingEmails(t.db, { provider: slow, baseUrl: BASE, concurrency: 1 });
    await expect.poll(() => inFlight, { timeout: 30_000 }).toBeDefined();

    // Every other lease worker A holds lapses (as if its first send had taken longer than the lease),
    // and worker B sends what is due.
    await t.owner(
      `UPDATE notification_email SET next_attempt_at = now() - interval '1 second'
        WHERE status = 'sending' AND notification_id <> $1`,
      [inFlight],
    );
    const b = await deliverPendingEmails(t.db, { provider: real, baseUrl: BASE });
    expect(b.sent).toBe(2);
    goOn();
    expect(await a).toMatchObject({ sent: 1 });

    const sent = messagesTo(bob.label).map((m) => m.messageId);
    expect(sent).toHaveLength(3);
    expect(new Set(sent).size).toBe(3);
    const rows = await t.db.notificationEmail.findMany({ where: { notificationId: { in: ids } } });
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
      ['sent', 1],
    ]);
  });

  it('a row whose last allowed attempt died mid-send is given up with a reason, not leased again', async () => {
    const carol = await makePerson(t.db, 'operator');
    // Its worker died during attempt 3 of 3: still 'sending', lease lapsed.
    const id = await queued(carol, 5, { status: 'sending', attempts: 3, lastError: 'connection reset' });
    const result = await deliverPendingEmails(t.db, { provider: notify(), baseUrl: BASE, maxAttempts: 3 });
    expect(result).toMatchObject({ sent: 0, gaveUp: 1 });
    expect(messagesTo(carol.label)).toHaveLength(0);
    expect(await t.db.notificationEmail.findUniqueOrThrow({ where: { notificationId: id } })).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastError: 'gave up after 3 attempts; last error: connection reset',
    });
  });

  it('an email to a person disabled since it was queued is not sent, and the row says why', async () => {
    const dave = await makePerson(t.db, 'operator');
    const erin = await makePerson(t.db, 'operator');
    const toDave = await queued(dave, 5);
    const toErin = await queued(erin, 5);
    await t.db.user.update({ where: { id: dave.id }, data: { disabled: true } });
    const result = await deliverPendingEmails(t.db, { provider: notify(), baseUrl: BASE });
    expect(result).toMatchObject({ sent: 1, skipped: 1 });
    expect(messagesTo(dave.label)).toHaveLength(0);
    expect(messagesTo(erin.label)).toHaveLength(1);
    expect(await t.db.notificationEmail.findUniqueOrThrow({ where: { notificationId: toDave } })).toMatchObject({
      status: 'failed',
      attempts: 0,
      lastError: "not sent: the recipient's account is disabled",
    });
    expect(await t.db.notificationEmail.findUniqueOrThrow({ where: { notificationId: toErin } })).toMatchObject({
      status: 'sent',
    });
  });
});
