// Sends the chat webhook outbox, off the request path, as the email outbox does (../email-outbox.ts):
// each lane leases one due row (FOR UPDATE SKIP LOCKED) right before posting it, and marks it only if
// its lease is still the one it took. Every post is signed the Standard Webhooks way with the route's
// secret; webhook-id is the row id, the same on every retry, so a receiver drops a repeat. A 2xx is
// delivered; a 4xx other than 408 and 429 is a refusal that would repeat (given up); anything else
// (5xx, timeout, refused connection) is retried with exponential backoff up to the attempt limit.
import { sqlRows, type Db } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import { signStandardWebhook } from '@/lib/providers/webhook/index.ts';
import { backoffSeconds } from '../email-outbox.ts';
import { routeSecret, type NotificationRoute } from './routes.ts';
import { notificationRoutes } from './stored-routes.ts';
import { slackMessage, type StoredPayload } from './slack.ts';

export interface WebhookDeliveryResult {
  sent: number;
  retrying: number;
  gaveUp: number;
}

interface Leased {
  id: string;
  route: string;
  attempts: number;
  payload: StoredPayload;
}

const TIMEOUT_MS = 10_000;

async function leaseOne(db: Db, leaseSeconds: number, maxAttempts: number): Promise<Leased | undefined> {
  const [row] = await sqlRows<Leased>(
    db,
    `UPDATE notification_webhook w
        SET status = 'sending', attempts = w.attempts + 1, next_attempt_at = now() + make_interval(secs => $1)
      WHERE w.id IN (SELECT x.id FROM notification_webhook x
                      WHERE x.status IN ('pending', 'sending') AND x.next_attempt_at <= now() AND x.attempts < $2
                      ORDER BY x.next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING w.id::text AS id, w.route, w.attempts, w.payload`,
    [leaseSeconds, maxAttempts],
  );
  return row;
}

/** One post: the body in the route's format, signed. Resolves with the status, or throws (no answer). */
async function post(route: NotificationRoute, id: string, payload: StoredPayload): Promise<number> {
  const body = JSON.stringify(route.format === 'slack' ? slackMessage(payload) : payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(route.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'effect-ledger-notifications',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook(routeSecret(route), id, timestamp, body),
    },
    body,
    redirect: 'manual', // a redirect is not a delivery
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
}

export async function deliverPendingWebhooks(
  db: Db,
  options: {
    batch?: number;
    concurrency?: number;
    leaseSeconds?: number;
    backoffBaseSeconds?: number;
    maxAttempts?: number;
  } = {},
): Promise<WebhookDeliveryResult> {
  const routes = new Map((await notificationRoutes(db)).map((r) => [r.name, r]));
  const maxAttempts = options.maxAttempts ?? env().NOTIFY_WEBHOOK_MAX_ATTEMPTS;
  const result: WebhookDeliveryResult = { sent: 0, retrying: 0, gaveUp: 0 };
  // Rows whose attempts are used up (their last worker died mid-post) or whose route is gone.
  const settled = await db.notificationWebhook.updateMany({
    where: {
      status: { in: ['pending', 'sending'] },
      nextAttemptAt: { lte: new Date() },
      OR: [{ attempts: { gte: maxAttempts } }, { route: { notIn: [...routes.keys()] } }],
    },
    data: { status: 'failed', lastError: 'gave up: attempts used up, or the route is no longer configured or stored' },
  });
  result.gaveUp += settled.count;
  const deliverOne = async (row: Leased) => {
    const route = routes.get(row.route)!;
    let status: number | null = null;
    let error: string | null = null;
    try {
      status = await post(route, row.id, row.payload);
      if (status < 200 || status >= 300) error = `the receiver answered ${status}`;
    } catch (e) {
      error = (e as Error).message;
    }
    const fence = { id: row.id, status: 'sending', attempts: row.attempts };
    if (!error) {
      await db.notificationWebhook.updateMany({
        where: fence,
        data: { status: 'sent', sentAt: new Date(), responseStatus: status, lastError: null },
      });
      result.sent++;
      return;
    }
    const refused = status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;
    const giveUp = refused || row.attempts >= maxAttempts;
    const wait = backoffSeconds(row.attempts, options.backoffBaseSeconds ?? 15);
    await db.notificationWebhook.updateMany({
      where: fence,
      data: {
        status: giveUp ? 'failed' : 'pending',
        responseStatus: status,
        lastError: error.slice(0, 2000),
        nextAttemptAt: new Date(Date.now() + wait * 1000),
      },
    });
    if (giveUp) result.gaveUp++;
    else result.retrying++;
  };
  const batch = options.batch ?? 50;
  let leased = 0;
  const next = async () => {
    if (leased >= batch) return undefined;
    leased++;
    const row = await leaseOne(db, options.leaseSeconds ?? 60, maxAttempts);
    if (!row) leased = batch;
    return row;
  };
  await Promise.all(
    Array.from({ length: Math.max(1, options.concurrency ?? 4) }, async () => {
      for (let r = await next(); r; r = await next()) await deliverOne(r);
    }),
  );
  return result;
}
