// What each worker does for notifications every NOTIFY_EMAIL_INTERVAL_SECONDS: tell the requesters
// of requests that expired undecided (nothing else happens at that moment, so a sweep finds them),
// queue and post the chat webhooks (./webhooks), then send the due emails of the outbox. Every worker may run both at once: the event row makes the
// sweep tell each requester once, and SKIP LOCKED leases keep two workers off the same email.
import type { Db } from '@/lib/db/client.ts';
import { SmtpProvider } from '@/lib/providers/smtp/index.ts';
import type { ProviderRegistry, RegisteredProvider } from '@/lib/providers/registry.ts';
import { deliverPendingEmails, type DeliveryOptions } from './email-outbox.ts';
import { notifyApprovalOutcome } from './events.ts';
import { checkWebhookEvents } from './webhooks/checks.ts';
import { deliverPendingWebhooks } from './webhooks/deliver.ts';
import { plural } from '@/lib/plural.ts';

/** Requests that expired longer ago than this are not announced (a first start on an old database). */
const EXPIRY_LOOKBACK_DAYS = 7;

export async function sweepExpiredApprovals(db: Db, limit = 100): Promise<number> {
  const due = await db.$queryRaw<{ id: string }[]>`
    SELECT a.id FROM approval_request a
     WHERE a.status IN ('open', 'expired') AND a.expires_at <= now()
       AND a.expires_at > now() - make_interval(days => ${EXPIRY_LOOKBACK_DAYS}::int)
       AND NOT EXISTS (SELECT 1 FROM notification_event e WHERE e.kind = 'approval.expired' AND e.subject_id = a.id)
     ORDER BY a.expires_at LIMIT ${limit}`;
  let told = 0;
  for (const { id } of due) told += await db.$transaction((tx) => notifyApprovalOutcome(tx, id));
  return told;
}

/** The SMTP provider NOTIFY_EMAIL_PROVIDER names; refuses a name that is not an smtp provider. */
export function notificationEmailProvider(registry: ProviderRegistry, name: string | undefined) {
  if (!name) return undefined;
  const provider = registry.get(name);
  if (!(provider instanceof SmtpProvider))
    throw new Error(`NOTIFY_EMAIL_PROVIDER: provider "${name}" is not an smtp provider (LEDGER_PROVIDERS)`);
  return provider;
}

export interface NotificationSchedule {
  /** Runs one pass now (also what the timer does). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

export function startNotificationSchedule(options: {
  db: Db;
  intervalMs: number;
  provider?: RegisteredProvider;
  baseUrl: string;
  delivery?: Omit<DeliveryOptions, 'provider' | 'baseUrl'>;
  webhooks?: Parameters<typeof deliverPendingWebhooks>[1];
  log: (line: string) => void;
}): NotificationSchedule {
  let pass: Promise<void> = Promise.resolve();
  let running = false;
  const once = async () => {
    const expired = await sweepExpiredApprovals(options.db);
    if (expired > 0) options.log(`notifications: told ${plural(expired, 'requester')} of expired requests`);
    // Chat webhooks: the events no transaction records (unknowns, the audit chain), then the outbox.
    const queued = await checkWebhookEvents(options.db);
    const w = await deliverPendingWebhooks(options.db, options.webhooks);
    if (queued + w.sent + w.retrying + w.gaveUp > 0)
      options.log(
        `notifications: webhooks queued ${queued}, sent ${w.sent}, retrying ${w.retrying}, given up ${w.gaveUp}`,
      );
    if (!options.provider) return;
    const r = await deliverPendingEmails(options.db, {
      ...options.delivery,
      provider: options.provider,
      baseUrl: options.baseUrl,
    });
    if (r.sent + r.retrying + r.gaveUp + r.skipped > 0)
      options.log(
        `notifications: emails sent ${r.sent}, retrying ${r.retrying}, given up ${r.gaveUp}, not sent to disabled people ${r.skipped}`,
      );
  };
  const tick = () => {
    if (running) return pass;
    running = true;
    pass = once()
      .catch((error: unknown) => options.log(`notifications: pass failed: ${(error as Error).message}`))
      .finally(() => {
        running = false;
      });
    return pass;
  };
  const timer = setInterval(() => void tick(), options.intervalMs);
  timer.unref();
  return {
    runOnce: tick,
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
