// Sends the email outbox, off the request path. Each of a pass's lanes leases one due row at a time
// with FOR UPDATE SKIP LOCKED (two workers never lease the same row), right before it sends it, with
// no transaction open, and marks it sent only if its lease is still the one it took (the attempt
// number fences a late writer). Leasing a row only when a lane is free to send it keeps the lease
// for the send itself: a row leased in a larger batch could wait in the queue until its lease lapsed,
// be leased and sent by another worker, and then be sent again by the first. A refusal or a lost
// connection is retried with exponential backoff; a permanent refusal (5xx) or the last allowed
// attempt gives up, and so does a pass that finds a row whose attempts are used up (its last worker
// died mid-send). A row whose recipient has been disabled since is not sent. The Message-ID comes from
// the notification id, so a relay that deduplicates sees one message even if a worker died between
// the send and the mark.
import { env } from '@/lib/env.ts';
import { sqlRows, type Db } from '@/lib/db/client.ts';
import type { RegisteredProvider } from '@/lib/providers/registry.ts';
import { isCallFailure } from '@/lib/providers/types.ts';

export interface DeliveryOptions {
  provider: RegisteredProvider;
  /** The console's public URL: links in emails are absolute. */
  baseUrl: string;
  /** The most rows one pass sends. */
  batch?: number;
  /** Sends in flight at once within a pass (each lane leases its next row when it is free). */
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
  /** Rows not sent because their recipient's account is disabled (marked failed with that reason). */
  skipped: number;
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

/** Marks failed, with the reason, due rows that must not be sent: those whose recipient is disabled
 *  (or gone), and those whose attempts are used up, which a lease never takes again (a worker that
 *  died during the last attempt left its row 'sending'). */
async function settleUnsendable(db: Db, maxAttempts: number): Promise<{ skipped: number; gaveUp: number }> {
  const rows = await sqlRows<{ disabled: boolean }>(
    db,
    `UPDATE notification_email e
        SET status = 'failed',
            last_error = CASE WHEN r.disabled THEN 'not sent: the recipient''s account is disabled'
                              ELSE 'gave up after ' || e.attempts || ' attempts' || coalesce('; last error: ' || e.last_error, '') END
       FROM (SELECT x.notification_id,
                    NOT EXISTS (SELECT 1 FROM notification n JOIN app_user u ON u.id = n.user_id
                                 WHERE n.id = x.notification_id AND NOT u.disabled) AS disabled
               FROM notification_email x
              WHERE x.status IN ('pending', 'sending') AND x.next_attempt_at <= now()) r
      WHERE e.notification_id = r.notification_id AND e.status IN ('pending', 'sending')
        AND e.next_attempt_at <= now() AND (r.disabled OR e.attempts >= $1)
    RETURNING r.disabled`,
    [maxAttempts],
  );
  const skipped = rows.filter((r) => r.disabled).length;
  return { skipped, gaveUp: rows.length - skipped };
}

/** Leases the most overdue sendable row for one send: a recipient who is still enabled, attempts left. */
async function leaseOne(db: Db, leaseSeconds: number, maxAttempts: number): Promise<Leased | undefined> {
  const [row] = await sqlRows<Leased>(
    db,
    `UPDATE notification_email e
        SET status = 'sending', attempts = e.attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
       FROM notification n
      WHERE e.notification_id = n.id
        AND e.notification_id IN (
          SELECT x.notification_id FROM notification_email x
            JOIN notification xn ON xn.id = x.notification_id
            JOIN app_user u ON u.id = xn.user_id AND NOT u.disabled
           WHERE x.status IN ('pending', 'sending') AND x.next_attempt_at <= now() AND x.attempts < $2
           ORDER BY x.next_attempt_at LIMIT 1 FOR UPDATE OF x SKIP LOCKED)
    RETURNING e.notification_id AS id, e.to_address AS "to", e.attempts, n.title, n.body, n.link`,
    [leaseSeconds, maxAttempts],
  );
  return row;
}

export async function deliverPendingEmails(db: Db, options: DeliveryOptions): Promise<DeliveryResult> {
  const maxAttempts = options.maxAttempts ?? env().NOTIFY_EMAIL_MAX_ATTEMPTS;
  const batch = options.batch ?? 20;
  const settled = await settleUnsendable(db, maxAttempts);
  const result: DeliveryResult = { sent: 0, retrying: 0, ...settled };
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
  let leased = 0;
  const next = async () => {
    if (leased >= batch) return undefined;
    leased++;
    const row = await leaseOne(db, options.leaseSeconds ?? 120, maxAttempts);
    if (!row) leased = batch; // nothing due: every lane stops
    return row;
  };
  const lanes = Math.max(1, Math.min(options.concurrency ?? 4, batch));
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let n = await next(); n; n = await next()) await deliverOne(n);
    }),
  );
  return result;
}
