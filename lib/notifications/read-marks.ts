// Marking a person's notifications read: one (Mark read), all of them (Mark all read), or one by
// opening its link from the inbox. Every write is scoped to the signed-in person: another person's
// notification id changes nothing. Read marks are the person's own bookkeeping, not a decision about
// the ledger, so they are not audited.
import { z } from 'zod';
import type { Db } from '@/lib/db/client.ts';
import { notFound } from '@/lib/ledger/errors.ts';
import { parseInput } from '@/lib/ledger/validate.ts';

interface Ctx {
  db: Db;
  actor: { id: string };
}

export const markReadInput = z.strictObject({ notificationId: z.uuid() });

/** Marks one of the person's own notifications read; another person's id changes nothing. */
export async function markRead(ctx: Ctx, raw: unknown): Promise<{ marked: number }> {
  const input = parseInput(markReadInput, raw);
  const r = await ctx.db.notification.updateMany({
    where: { id: input.notificationId, userId: ctx.actor.id, readAt: null },
    data: { readAt: new Date() },
  });
  return { marked: r.count };
}

export const markAllReadInput = z.strictObject({});

export async function markAllRead(ctx: Ctx, raw: unknown): Promise<{ marked: number }> {
  parseInput(markAllReadInput, raw);
  const r = await ctx.db.notification.updateMany({
    where: { userId: ctx.actor.id, readAt: null },
    data: { readAt: new Date() },
  });
  return { marked: r.count };
}

export const openNotificationInput = markReadInput;

/** Links are console paths written by lib/notifications/events.ts; anything else leads to the inbox,
 *  so a stored link can never turn the console into a redirect to another site. */
const CONSOLE_PATH = /^\/(?![/\\])/;

/**
 * Opening a notification's link: marks it read (once; a second opening changes nothing) and returns
 * where it leads. Someone else's notification is not found, and its link is not told.
 */
export async function openNotification(ctx: Ctx, raw: unknown): Promise<{ link: string; marked: number }> {
  const input = parseInput(openNotificationInput, raw);
  const own = await ctx.db.notification.findFirst({
    where: { id: input.notificationId, userId: ctx.actor.id },
    select: { link: true },
  });
  if (!own) throw notFound(`no notification ${input.notificationId}`, { field: 'notificationId' });
  const { marked } = await markRead(ctx, input);
  return { link: CONSOLE_PATH.test(own.link) ? own.link : '/inbox', marked };
}
