// Per-person notification preferences: for each kind, in the console only, email too, or off. A
// change is audited in the same transaction (A1), with the choices before and after.
import { z } from 'zod';
import { appendAudit } from '@/lib/audit/append.ts';
import type { Db, DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/ledger/actor.ts';
import { parseInput } from '@/lib/ledger/validate.ts';
import { CHANNELS, DEFAULT_CHANNEL, NOTIFICATION_KIND_NAMES, type Channel, type NotificationKind } from './kinds.ts';

export type Preferences = Record<NotificationKind, Channel>;

export async function preferencesOf(db: DbOrTx, userId: string): Promise<Preferences> {
  const rows = await db.notificationPreference.findMany({ where: { userId }, select: { kind: true, channel: true } });
  const chosen = new Map(rows.map((r) => [r.kind, r.channel as Channel]));
  return Object.fromEntries(
    NOTIFICATION_KIND_NAMES.map((kind) => [kind, chosen.get(kind) ?? DEFAULT_CHANNEL]),
  ) as Preferences;
}

const channelField = z.enum(CHANNELS, { message: `one of ${CHANNELS.join(', ')}` });

/** Some or all kinds; a kind left out keeps its current channel. */
export const setPreferencesInput = z.strictObject({
  preferences: z
    .partialRecord(z.enum(NOTIFICATION_KIND_NAMES), channelField)
    .refine((p) => Object.keys(p).length > 0, 'name at least one notification kind'),
});

interface Ctx {
  db: Db;
  actor: Actor & { kind: 'user' };
  request?: RequestMeta;
}

export async function setPreferences(ctx: Ctx, raw: unknown): Promise<Preferences> {
  const input = parseInput(setPreferencesInput, raw);
  const userId = ctx.actor.id;
  return ctx.db.$transaction(async (tx) => {
    const before = await preferencesOf(tx, userId);
    const changes = Object.entries(input.preferences).filter(
      ([kind, channel]) => before[kind as NotificationKind] !== channel,
    ) as [NotificationKind, Channel][];
    for (const [kind, channel] of changes) {
      await tx.notificationPreference.upsert({
        where: { userId_kind: { userId, kind } },
        create: { userId, kind, channel },
        update: { channel },
      });
    }
    const after = { ...before, ...Object.fromEntries(changes) } as Preferences;
    if (changes.length > 0) {
      await appendAudit(tx, {
        chain: `user:${userId}`,
        actor: ctx.actor,
        action: 'notification.preferences',
        subjectType: 'user',
        subjectId: userId,
        detail: {
          changed: Object.fromEntries(changes.map(([kind, channel]) => [kind, { from: before[kind], to: channel }])),
        },
        request: ctx.request,
      });
    }
    return after;
  });
}
