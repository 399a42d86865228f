// Queueing a chat webhook: one outbox row per route that takes the event, written in the caller's
// transaction, so a webhook exists exactly when its event committed. The unique (route, event type,
// subject) keeps a retried hook or a second worker's check from queueing one event twice.
import type { DbOrTx } from '@/lib/db/client.ts';
import { consoleBaseUrl } from '../email-outbox.ts';
import { routeTakes, type NotificationRoute, type WebhookEventType } from './routes.ts';
import { notificationRoutes } from './stored-routes.ts';

export interface WebhookEvent {
  type: WebhookEventType;
  subjectId: string;
  /** The workflows the event is about (routes filter on them); none for events about the whole ledger. */
  workflows: readonly string[];
  title: string;
  text: string;
  /** A console path; the payload carries the absolute link. */
  link: string;
  /** Figures a machine reading the payload may want (counts, ids). */
  details?: Record<string, unknown>;
}

/** The Standard Webhooks payload: { type, timestamp, data }. */
export function webhookPayload(event: WebhookEvent, at = new Date()) {
  return {
    type: event.type,
    timestamp: at.toISOString(),
    data: {
      subjectId: event.subjectId,
      workflows: [...event.workflows],
      title: event.title,
      text: event.text,
      url: `${consoleBaseUrl()}${event.link}`,
      ...event.details,
    },
  };
}

/** Returns how many routes the event was queued for. `routes`: the caller's read of them (the
 *  environment's and the stored ones), read here when not given. */
export async function enqueueWebhooks(
  tx: DbOrTx,
  event: WebhookEvent,
  options: { only?: readonly string[]; routes?: readonly NotificationRoute[] } = {},
): Promise<number> {
  const { only } = options;
  const routes = (options.routes ?? (await notificationRoutes(tx))).filter(
    (r) => routeTakes(r, event.type, event.workflows) && (!only || only.includes(r.name)),
  );
  if (routes.length === 0) return 0;
  const payload = webhookPayload(event);
  const rows = await tx.notificationWebhook.createMany({
    data: routes.map((r) => ({ route: r.name, eventType: event.type, subjectId: event.subjectId, payload })),
    skipDuplicates: true,
  });
  return rows.count;
}
