// The inbox on the real database: keyset pages, newest first (ties and microseconds apart included),
// walked both ways; opening a notification's link marks it read, the person's own only, through the
// lib command and through the route the inbox links to (cross-site, prefetch, someone else's id).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { resetEnvCache } from '@/lib/env.ts';
import { inbox, INBOX_PAGE_SIZE, unreadCount } from '@/lib/notifications/inbox.ts';
import { openNotification } from '@/lib/notifications/read-marks.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makePerson } from './notifications-fixtures.ts';

const t = await createTestDatabase({ poolSize: 6 });
process.env.DATABASE_URL = t.appUrl;
process.env.NEXTAUTH_SECRET = 'notifications-inbox-test-secret';
resetEnvCache();

let openRoute: typeof import('@/app/(console)/inbox/open/[notificationId]/route.ts').GET;
let mintSessionToken: typeof import('@/lib/auth/session.ts').mintSessionToken;
beforeAll(async () => {
  openRoute = (await import('@/app/(console)/inbox/open/[notificationId]/route.ts')).GET;
  mintSessionToken = (await import('@/lib/auth/session.ts')).mintSessionToken;
});

/** Inserts notifications at the given times (text, microseconds kept); returns their ids. */
async function notify(userId: string, times: string[], link = '/runs'): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, at] of times.entries()) {
    const id = randomUUID();
    await t.owner(
      `INSERT INTO notification (id, user_id, kind, subject_id, title, body, link, created_at)
       VALUES ($1, $2, 'replay.finished', $3, $4, 'b', $5, $6::timestamptz)`,
      [id, userId, randomUUID(), `n${i}`, link, at],
    );
    ids.push(id);
  }
  return ids;
}

describe('the inbox', () => {
  it('pages newest first by keyset: every notification once, both ways, ties and microseconds included', async () => {
    const bob = await makePerson(t.db, 'operator');
    const other = await makePerson(t.db, 'operator');
    await notify(other.id, ['2026-12-01 10:00:00.5+00']);
    // Three rows in one microsecond, rows a microsecond apart (a JavaScript Date cannot tell them
    // apart), and enough others for three pages.
    const times = [
      ...Array.from({ length: 3 }, () => '2026-12-01 10:00:00.000002+00'),
      '2026-12-01 10:00:00.000001+00',
      '2026-12-01 10:00:00.000003+00',
      ...Array.from(
        { length: 2 * INBOX_PAGE_SIZE - 3 },
        (_, i) => `2026-12-01 09:${String(i % 60).padStart(2, '0')}:00+00`,
      ),
    ];
    await notify(bob.id, times);
    const { rows } = await t.owner<{ id: string }>(
      `SELECT id::text FROM notification WHERE user_id = $1 ORDER BY created_at DESC, id DESC`,
      [bob.id],
    );
    const expected = rows.map((r) => r.id);
    expect(expected).toHaveLength(2 * INBOX_PAGE_SIZE + 2);

    const forward = [await inbox(t.db, bob.id)];
    expect(forward[0]!.newer).toBeNull();
    while (forward.at(-1)!.older) forward.push(await inbox(t.db, bob.id, { before: forward.at(-1)!.older! }));
    expect(forward.map((p) => p.items.length)).toEqual([INBOX_PAGE_SIZE, INBOX_PAGE_SIZE, 2]);
    expect(forward.flatMap((p) => p.items.map((i) => i.id))).toEqual(expected);
    expect(forward.every((p) => p.unread === expected.length)).toBe(true);

    // Back from the last page: the same pages, in the same order, and no previous page on the first.
    const back = [forward.at(-1)!];
    while (back.at(-1)!.newer) back.push(await inbox(t.db, bob.id, { after: back.at(-1)!.newer! }));
    expect(back.map((p) => p.items.map((i) => i.id))).toEqual(forward.map((p) => p.items.map((i) => i.id)).reverse());
    expect(back.at(-1)!.newer).toBeNull();

    // A cursor that is not one of ours is the first page, not an error.
    expect((await inbox(t.db, bob.id, { before: 'not-a-cursor' })).items[0]!.id).toBe(expected[0]);
  });

  it("opening a notification marks it read and says where it leads; another person's is not found and stays unread", async () => {
    const bob = await makePerson(t.db, 'operator');
    const alice = await makePerson(t.db, 'operator');
    const [id] = await notify(bob.id, ['2026-12-01 10:00:00+00'], '/approvals#approval-x');
    await expect(openNotification({ db: t.db, actor: alice }, { notificationId: id })).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await unreadCount(t.db, bob.id)).toBe(1);
    expect(await openNotification({ db: t.db, actor: bob }, { notificationId: id })).toEqual({
      link: '/approvals#approval-x',
      marked: 1,
    });
    expect(await unreadCount(t.db, bob.id)).toBe(0);
    // Opening it again leads to the same place and changes nothing.
    const readAt = (await t.db.notification.findUniqueOrThrow({ where: { id } })).readAt;
    expect(await openNotification({ db: t.db, actor: bob }, { notificationId: id })).toEqual({
      link: '/approvals#approval-x',
      marked: 0,
    });
    expect((await t.db.notification.findUniqueOrThrow({ where: { id } })).readAt).toEqual(readAt);
  });

  it("the inbox's open route: 303 to the link and read for its owner; 404 for someone else, 403 cross-site, nothing for a prefetch", async () => {
    const bob = await makePerson(t.db, 'operator');
    const alice = await makePerson(t.db, 'operator');
    const [id] = await notify(bob.id, ['2026-12-01 10:00:00+00'], '/runs/abc/replay');
    const [elsewhere] = await notify(bob.id, ['2026-12-01 10:00:01+00'], 'https://evil.example/');
    const cookieOf = async (who: { id: string }) => {
      const u = await t.db.user.findUniqueOrThrow({ where: { id: who.id } });
      return `next-auth.session-token=${await mintSessionToken(u)}`;
    };
    const open = async (who: { id: string } | null, notificationId: string, headers: Record<string, string> = {}) =>
      openRoute(
        new Request(`http://console.test/inbox/open/${notificationId}`, {
          headers: {
            host: 'console.test',
            'sec-fetch-site': 'same-origin',
            ...(who ? { cookie: await cookieOf(who) } : {}),
            ...headers,
          },
        }),
        { params: Promise.resolve({ notificationId }) },
      );
    const isRead = async (n: string) =>
      (await t.db.notification.findUniqueOrThrow({ where: { id: n } })).readAt !== null;

    expect((await open(alice, id!)).status).toBe(404);
    expect((await open(null, id!)).status).toBe(401);
    expect((await open(bob, id!, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    const prefetch = await open(bob, id!, { 'sec-purpose': 'prefetch' });
    expect(prefetch.status).toBe(204);
    expect(await isRead(id!)).toBe(false);

    const opened = await open(bob, id!);
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/runs/abc/replay');
    expect(opened.headers.get('cache-control')).toBe('no-store');
    expect(await isRead(id!)).toBe(true);
    // A link that is not a console path never becomes a redirect off the console.
    const off = await open(bob, elsewhere!);
    expect(off.headers.get('location')).toBe('/inbox');
  });

  it("an email's link (a cross-site navigation the person started) opens and marks read; signed out, it goes by sign-in", async () => {
    const bob = await makePerson(t.db, 'operator');
    const [id] = await notify(bob.id, ['2026-12-01 10:00:00+00'], '/approvals#approval-x');
    const u = await t.db.user.findUniqueOrThrow({ where: { id: bob.id } });
    const cookie = `next-auth.session-token=${await mintSessionToken(u)}`;
    const webmail = { host: 'console.test', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' };
    const open = (headers: Record<string, string>) =>
      openRoute(new Request(`http://console.test/inbox/open/${id}`, { headers }), {
        params: Promise.resolve({ notificationId: id! }),
      });
    const isRead = async () => (await t.db.notification.findUniqueOrThrow({ where: { id: id! } })).readAt !== null;

    // Not started by the person (a script, an image, a redirect chain): refused as before, nothing read.
    expect((await open({ ...webmail, cookie, 'sec-fetch-dest': 'document' })).status).toBe(403);
    expect((await open({ ...webmail, cookie, 'sec-fetch-dest': 'image', 'sec-fetch-user': '?1' })).status).toBe(403);
    expect(await isRead()).toBe(false);

    const clicked = { ...webmail, 'sec-fetch-dest': 'document', 'sec-fetch-user': '?1' };
    const signedOut = await open(clicked);
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`/sign-in?callbackUrl=${encodeURIComponent(`/inbox/open/${id}`)}`);
    expect(await isRead()).toBe(false);

    const opened = await open({ ...clicked, cookie });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/approvals#approval-x');
    expect(await isRead()).toBe(true);
  });
});
