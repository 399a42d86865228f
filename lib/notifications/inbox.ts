// A person's inbox: their notifications, newest first, a page at a time, and the unread count the
// navigation shows. Every read is scoped to the signed-in person: nobody reads another's rows.
import { Prisma, db as sharedDb, type Db } from '@/lib/db/client.ts';
import { decodeCursor, encodeCursor, TIMESTAMP_TEXT, UUID_TEXT } from '@/lib/read-models/common.ts';
import type { NotificationKind } from './kinds.ts';

export const INBOX_PAGE_SIZE = 25;

export interface InboxItem {
  id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  link: string;
  createdAt: Date;
  readAt: Date | null;
}

export interface InboxPage {
  items: InboxItem[];
  unread: number;
  /** Cursor of the page of newer notifications (the previous page), null on the newest. */
  newer: string | null;
  /** Cursor of the page of older notifications (the next page), null on the oldest. */
  older: string | null;
}

/** Where a page starts: after `before` (older than it) or, going back, before `after` (newer than it). */
export interface InboxPosition {
  before?: string;
  after?: string;
}

export async function unreadCount(db: Db, userId: string): Promise<number> {
  return db.notification.count({ where: { userId, readAt: null } });
}

/** The count the console's navigation shows, for a person the layout already checked. */
export async function navUnreadCount(userId: string): Promise<number> {
  return unreadCount(sharedDb(), userId);
}

// The keyset is (created_at, id), newest first. created_at keeps microseconds, which a JavaScript
// Date would drop (two rows a microsecond apart would then be skipped or shown twice): the cursor
// carries PostgreSQL's own text of the time, which casts back exactly.
type Edge = [createdAt: string, id: string];

function edgeOf(cursor: string | undefined): Edge | null {
  return decodeCursor(
    cursor,
    (v): v is Edge =>
      v.length === 2 &&
      typeof v[0] === 'string' &&
      TIMESTAMP_TEXT.test(v[0]) &&
      typeof v[1] === 'string' &&
      UUID_TEXT.test(v[1]),
  );
}

interface Row extends InboxItem {
  position: string;
}

function rowsBeside(db: Db, userId: string, edge: Edge | null, side: 'older' | 'newer', limit: number) {
  const beyond = !edge
    ? Prisma.empty
    : side === 'older'
      ? Prisma.sql`AND (created_at, id) < (${edge[0]}::timestamptz, ${edge[1]}::uuid)`
      : Prisma.sql`AND (created_at, id) > (${edge[0]}::timestamptz, ${edge[1]}::uuid)`;
  const order = side === 'older' ? Prisma.sql`created_at DESC, id DESC` : Prisma.sql`created_at ASC, id ASC`;
  return db.$queryRaw<Row[]>`
    SELECT id::text, kind, title, body, link, created_at AS "createdAt", read_at AS "readAt",
           created_at::text AS position
      FROM notification
     WHERE user_id = ${userId}::uuid ${beyond}
     ORDER BY ${order} LIMIT ${limit}`;
}

async function anyBeside(db: Db, userId: string, edge: Edge, side: 'older' | 'newer'): Promise<boolean> {
  return (await rowsBeside(db, userId, edge, side, 1)).length > 0;
}

const cursorOf = (row: Row) => encodeCursor([row.position, row.id]);

/** One page of the person's inbox, newest first: the newest page, or the page next to a cursor. */
export async function inbox(
  db: Db,
  userId: string,
  at: InboxPosition = {},
  pageSize = INBOX_PAGE_SIZE,
): Promise<InboxPage> {
  const after = edgeOf(at.after);
  const before = after ? null : edgeOf(at.before);
  const [fetched, unread] = await Promise.all([
    after
      ? rowsBeside(db, userId, after, 'newer', pageSize + 1)
      : rowsBeside(db, userId, before, 'older', pageSize + 1),
    unreadCount(db, userId),
  ]);
  const rows = fetched.slice(0, pageSize);
  if (after) rows.reverse();
  const first = rows[0];
  const last = rows.at(-1);
  // The side the page was fetched towards knows from its extra row whether there is more; the other
  // side is asked (a cursor's own row may have been pruned since).
  const moreOlder = after
    ? Boolean(last && (await anyBeside(db, userId, [last.position, last.id], 'older')))
    : fetched.length > pageSize;
  const moreNewer = after
    ? fetched.length > pageSize
    : Boolean(before && first && (await anyBeside(db, userId, [first.position, first.id], 'newer')));
  return {
    items: rows.map(({ position: _position, ...item }) => ({ ...item, kind: item.kind as NotificationKind })),
    unread,
    newer: moreNewer && first ? cursorOf(first) : null,
    older: moreOlder && last ? cursorOf(last) : null,
  };
}
