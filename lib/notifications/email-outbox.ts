// Sends the email outbox, off the request path. A pass leases a batch of due rows with FOR UPDATE
// SKIP LOCKED (two workers never lease the same row), sends each with no transaction open, and marks
// it sent only if its lease is still the one it took (the attempt number fences a late writer). A
// refusal or a lost connection is retried with exponential backoff; a permanent refusal (5xx) or
// the last allowed attempt gives up. The Message-ID comes from the notification id, so a relay that
// deduplicates sees one message even if a worker died between the send and the mark.
import { env } from '@/lib/env.ts';
import { sqlRows, type Db } from '@/lib/db/client.ts';
import type { RegisteredProvider } from '@/lib/providers/registry.ts';
import { isCallFailure } from '@/lib/providers/types.ts';

export interface DeliveryOptions {
  provider: RegisteredProvider;
  /** The console's public URL: links in emails are absolute. */
  baseUrl: string;
  batch?: number;
  /** Sends in flight at once within a pass. */
  concurrency?: number;
  maxAttempts?: number;
  /** How long a leased row stays with its worker before another may retry it. */
  leaseSeconds?: number;
  /** Backoff after the n-th failed attempt: baseSeconds * 2^(n-1), at most an hour. */
  backoffBaseSeconds?: number;
}

export interface DeliveryResult {
  sent: number;
  retrying: number;
  gaveUp: number;
}

/** The console's public URL (NEXTAUTH_URL), or the local one. */
export function consoleBaseUrl(): string {
  const e = env();
  return (e.NEXTAUTH_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
}

export function backoffSeconds(attempt: number, baseSeconds: number): number {
  return Math.min(3600, baseSeconds * 2 ** Math.max(0, attempt - 1));
}

interface Leased {
  id: string;
  to: string;
  attempts: number;
  title: string;
  body: string;
  link: string;
}

/** The email's text. Its link opens the notification (`/inbox/open/<id>`): the inbox row is marked
 *  read on the way to what it is about, as when it is opened from the console. */
export function emailText(n: Pick<Leased, 'id' | 'body'>, baseUrl: string): string {
  return [
    n.body,
    '',
    `Open it in the console: ${baseUrl}/inbox/open/${n.id}`,
    '',
    `Choose which notifications you get: ${baseUrl}/account/notifications`,
  ].join('\n');
}

export async function deliverPendingEmails(db: Db, options: DeliveryOptions): Promise<DeliveryResult> {
  const maxAttempts = options.maxAttempts ?? env().NOTIFY_EMAIL_MAX_ATTEMPTS;
  const leased = await sqlRows<Leased>(
    db,
    `UPDATE notification_email e
        SET status = 'sending', attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => $2)
       FROM notification n
      WHERE e.notification_id = n.id
        AND e.notification_id IN (
          SELECT notification_id FROM notification_email
           WHERE status IN ('pending', 'sending') AND next_attempt_at <= now()
           ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING e.notification_id AS id, e.to_address AS "to", e.attempts, n.title, n.body, n.link`,
    [options.batch ?? 20, options.leaseSeconds ?? 120],
  );
  const result: DeliveryResult = { sent: 0, retrying: 0, gaveUp: 0 };
  const deliverOne = async (n: Leased) => {
    let outcome: { ok: true; receipt: string } | { ok: false; error: string; permanent: boolean };
    try {
      const raw = await options.provider.send({
        key: `notification:${n.id}`,
        epoch: 1,
        idempotencyKey: `notification-${n.id}`,
        target: n.to,
        payload: { subject: n.title, text: emailText(n, options.baseUrl) },
      });
      const c = options.provider.classify(raw);
      outcome =
        c.outcome === 'done'
          ? { ok: true, receipt: c.receipt }
          : { ok: false, error: JSON.stringify(c.evidence), permanent: c.evidence.permanent === true };
    } catch (error) {
      outcome = { ok: false, error: (error as Error).message, permanent: false };
      if (!isCallFailure(error)) outcome.error = `unexpected: ${outcome.error}`;
    }
    if (outcome.ok) {
      await db.notificationEmail.updateMany({
        where: { notificationId: n.id, status: 'sending', attempts: n.attempts },
        data: { status: 'sent', sentAt: new Date(), receipt: outcome.receipt, lastError: null },
      });
      result.sent++;
      return;
    }
    const giveUp = outcome.permanent || n.attempts >= maxAttempts;
    const wait = backoffSeconds(n.attempts, options.backoffBaseSeconds ?? 30);
    await db.notificationEmail.updateMany({
      where: { notificationId: n.id, status: 'sending', attempts: n.attempts },
      data: {
        status: giveUp ? 'failed' : 'pending',
        lastError: outcome.error.slice(0, 2000),
        nextAttemptAt: new Date(Date.now() + wait * 1000),
      },
    });
    if (giveUp) result.gaveUp++;
    else result.retrying++;
  };
  // A few sends at once: each SMTP send opens its own connection (lib/providers/smtp), so the wait
  // for the server, not the database, sets the pace of a serial loop.
  const queue = [...leased];
  const lanes = Math.min(options.concurrency ?? 4, queue.length);
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let n = queue.shift(); n; n = queue.shift()) await deliverOne(n);
    }),
  );
  return result;
}
