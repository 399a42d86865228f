// A person's inbox: their notifications, newest first, and the unread count the navigation shows.
// Every read and write is scoped to the signed-in person: nobody reads or marks another's rows.
import { z } from 'zod';
import { db as sharedDb, type Db } from '@/lib/db/client.ts';
import { parseInput } from '@/lib/ledger/validate.ts';
import type { NotificationKind } from './kinds.ts';

export const INBOX_PAGE_SIZE = 100;

export interface InboxItem {
  id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  link: string;
  createdAt: Date;
  readAt: Date | null;
}

export async function unreadCount(db: Db, userId: string): Promise<number> {
  return db.notification.count({ where: { userId, readAt: null } });
}

/** The count the console's navigation shows, for a person the layout already checked. */
export async function navUnreadCount(userId: string): Promise<number> {
  return unreadCount(sharedDb(), userId);
}

export async function inbox(db: Db, userId: string): Promise<{ items: InboxItem[]; unread: number }> {
  const [rows, unread] = await Promise.all([
    db.notification.findMany({
      where: { userId },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: INBOX_PAGE_SIZE,
      select: { id: true, kind: true, title: true, body: true, link: true, createdAt: true, readAt: true },
    }),
    unreadCount(db, userId),
  ]);
  return { items: rows.map((r) => ({ ...r, kind: r.kind as NotificationKind })), unread };
}

export const markReadInput = z.strictObject({ notificationId: z.uuid() });

interface Ctx {
  db: Db;
  actor: { id: string };
}

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
