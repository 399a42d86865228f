// Telling people about one event: an inbox row per person whose preference for the kind is not off,
// and an outbox row for those who want email too (when an email transport is configured). Runs inside
// the caller's transaction, so the notification exists exactly when the event committed. The event
// row (kind, subject) is claimed first: a retried hook or a second sweeper tells nobody twice.
import type { DbOrTx } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import { DEFAULT_CHANNEL, type Channel, type NotificationKind } from './kinds.ts';

export interface NotificationEventInput {
  kind: NotificationKind;
  subjectId: string;
  recipients: readonly string[];
  title: string;
  body: string;
  link: string;
}

/** Whether email notifications are on: NOTIFY_EMAIL_PROVIDER names an SMTP provider. */
export function emailChannelConfigured(): boolean {
  return Boolean(env().NOTIFY_EMAIL_PROVIDER);
}

/** Each recipient's channel for a kind (their stored choice, or the default). */
export async function channelsFor(
  tx: DbOrTx,
  kind: NotificationKind,
  userIds: readonly string[],
): Promise<Map<string, Channel>> {
  const rows = await tx.notificationPreference.findMany({
    where: { kind, userId: { in: [...userIds] } },
    select: { userId: true, channel: true },
  });
  const chosen = new Map(rows.map((r) => [r.userId, r.channel as Channel]));
  return new Map(userIds.map((id) => [id, chosen.get(id) ?? DEFAULT_CHANNEL]));
}

/** Returns how many people were told (0 when the event had been told already). */
export async function tell(tx: DbOrTx, event: NotificationEventInput): Promise<number> {
  const claimed = await tx.notificationEvent.createMany({
    data: [{ kind: event.kind, subjectId: event.subjectId }],
    skipDuplicates: true,
  });
  if (claimed.count === 0 || event.recipients.length === 0) return 0;
  const people = await tx.user.findMany({
    where: { id: { in: [...new Set(event.recipients)] }, disabled: false },
    select: { id: true, email: true },
  });
  const channels = await channelsFor(
    tx,
    event.kind,
    people.map((p) => p.id),
  );
  const told = people.filter((p) => channels.get(p.id) !== 'off');
  if (told.length === 0) return 0;
  const rows = await tx.notification.createManyAndReturn({
    data: told.map((p) => ({
      userId: p.id,
      kind: event.kind,
      subjectId: event.subjectId,
      title: event.title,
      body: event.body,
      link: event.link,
    })),
    skipDuplicates: true,
    select: { id: true, userId: true },
  });
  if (emailChannelConfigured()) {
    const address = new Map(told.map((p) => [p.id, p.email]));
    const emails = rows
      .filter((r) => channels.get(r.userId) === 'email')
      .map((r) => ({ notificationId: r.id, toAddress: address.get(r.userId)! }));
    if (emails.length > 0) await tx.notificationEmail.createMany({ data: emails, skipDuplicates: true });
  }
  return rows.length;
}
