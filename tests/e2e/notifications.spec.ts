// Notifications in the browser: the unread count in the navigation, the inbox with its link to the
// request (opening it marks it read), pages of the inbox, mark read, and the per-kind preferences on
// the account page (saved and shown again).
import { randomUUID } from 'node:crypto';
import { INBOX_PAGE_SIZE } from '@/lib/notifications/inbox.ts';
import { expect, test } from './fixtures.ts';

test('the approver sees the waiting request in the navigation count and the inbox; opening its link marks it read; preferences save', async ({
  page,
  signInAs,
}) => {
  // The seed leaves an epoch bump requested by operator A: operator B may approve it.
  await signInAs('operatorB');
  await page.goto('/runs');
  const inboxLink = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /^Inbox/ });
  const badge = inboxLink.getByTestId('nav-unread');
  await expect(badge).toBeVisible();
  const before = Number((await badge.textContent())!.replace(/\D/g, ''));
  expect(before).toBeGreaterThanOrEqual(1);

  await inboxLink.click();
  await expect(page).toHaveURL(/\/inbox$/);
  const waiting = page.getByTestId('notification').filter({ hasText: 'waits for your approval' }).first();
  await expect(waiting).toHaveAttribute('data-read', 'no');
  const link = waiting.getByRole('link', { name: /Epoch bump of 1 key waits for your approval/ });

  // Opening the link is reading it: the request opens, and the navigation counts one fewer.
  await link.click();
  await expect(page).toHaveURL(/\/approvals#approval-[0-9a-f-]{36}$/);
  const anchor = new URL(page.url()).hash.slice(1);
  await expect(page.locator(`[id="${anchor}"]`)).toBeVisible();
  if (before === 1) await expect(badge).toHaveCount(0);
  else await expect(badge).toHaveText(new RegExp(`^${before - 1}\\b`));
  await inboxLink.click();
  const opened = page.getByTestId('notification').filter({ hasText: 'waits for your approval' }).first();
  await expect(opened).toHaveAttribute('data-read', 'yes');
  // A read notification links straight to what it is about.
  await expect(opened.getByRole('link', { name: /waits for your approval/ })).toHaveAttribute(
    'href',
    `/approvals#${anchor}`,
  );

  await page.goto('/account/notifications');
  const waitingPref = page.getByTestId('preference-approval.waiting');
  await expect(waitingPref.getByLabel('Email too')).toBeChecked();
  await waitingPref.getByLabel('In the console only').check();
  await page.getByTestId('preference-replay.finished').getByLabel('Off').check();
  await page.getByTestId('save-preferences').click();
  await expect(page.getByRole('status')).toHaveText('Saved.');
  await page.reload();
  await expect(page.getByTestId('preference-approval.waiting').getByLabel('In the console only')).toBeChecked();
  await expect(page.getByTestId('preference-replay.finished').getByLabel('Off')).toBeChecked();
  await expect(page.getByTestId('preference-approval.expired').getByLabel('Email too')).toBeChecked();
});

test('the inbox shows a page at a time, newest first, with next and previous pages; Mark read counts down', async ({
  page,
  signInAs,
  e2e,
}) => {
  // More notifications than a page, for the auditor (nobody else's inbox changes), one second apart.
  const { createDb } = await import('@/lib/db/client.ts');
  const db = createDb(e2e.appUrl, 1);
  const userId = e2e.seeded.users.auditor.id;
  const total = INBOX_PAGE_SIZE + 5;
  const start = Date.now() - total * 1000;
  const ids: string[] = [];
  try {
    for (let i = 1; i <= total; i++) {
      const n = await db.notification.create({
        data: {
          userId,
          kind: 'replay.finished',
          subjectId: randomUUID(),
          title: `Paging check ${i}`,
          body: `The ${i}th of ${total}`,
          link: '/runs',
          createdAt: new Date(start + i * 1000),
        },
      });
      ids.push(n.id);
    }
    await signInAs('auditor');
    await page.goto('/inbox');
    const titles = () => page.getByTestId('notification').getByRole('link').allTextContents();
    const pages = page.getByRole('navigation', { name: 'Pages of notifications' });
    const newestFirst = (from: number, to: number) =>
      Array.from({ length: from - to + 1 }, (_, k) => `Paging check ${from - k}`);

    await expect(page.getByTestId('notification')).toHaveCount(INBOX_PAGE_SIZE);
    expect(await titles()).toEqual(newestFirst(total, 6));
    await expect(pages.getByRole('link', { name: 'Previous page' })).toHaveCount(0);

    await pages.getByRole('link', { name: 'Next page' }).click();
    await expect(page.getByTestId('notification')).toHaveCount(5);
    expect(await titles()).toEqual(newestFirst(5, 1));
    await expect(pages.getByRole('link', { name: 'Next page' })).toHaveCount(0);

    // Mark read on the second page: the count in the navigation and on the card go down by one.
    const badge = page.getByRole('navigation', { name: 'Console' }).getByTestId('nav-unread');
    await expect(badge).toHaveText(new RegExp(`^${total}\\b`));
    await page.getByTestId('notification').filter({ hasText: 'Paging check 3' }).getByTestId('mark-read').click();
    await expect(badge).toHaveText(new RegExp(`^${total - 1}\\b`));
    await expect(page.getByRole('heading', { name: `${total - 1} unread` })).toBeVisible();
    await expect(page.getByTestId('notification').filter({ hasText: 'Paging check 3' })).toHaveAttribute(
      'data-read',
      'yes',
    );

    await pages.getByRole('link', { name: 'Previous page' }).click();
    await expect(page.getByTestId('notification')).toHaveCount(INBOX_PAGE_SIZE);
    expect(await titles()).toEqual(newestFirst(total, 6));
  } finally {
    await db.notification.deleteMany({ where: { id: { in: ids } } });
    await db.$disconnect();
  }
});

test("an email's link followed from another site (webmail) opens the notification and marks it read; signed out, it goes by sign-in", async ({
  page,
  signInAs,
  e2e,
}) => {
  const { createDb } = await import('@/lib/db/client.ts');
  const { PASSWORD, USERS } = await import('./seed.ts');
  const db = createDb(e2e.appUrl, 1);
  const userId = e2e.seeded.users.operatorB.id;
  const notify = (title: string) =>
    db.notification.create({
      data: { userId, kind: 'replay.finished', subjectId: randomUUID(), title, body: title, link: '/support' },
    });
  const isRead = async (id: string) => (await db.notification.findUniqueOrThrow({ where: { id } })).readAt !== null;
  // What webmail shows: a page of another origin with the email's link, which the person clicks.
  const clickFromWebmail = async (id: string) => {
    await page.setContent(`<a href="${e2e.baseURL}/inbox/open/${id}">Open it in the console</a>`);
    await page.getByRole('link', { name: 'Open it in the console' }).click();
  };
  try {
    const first = await notify('Opened from webmail while signed in');
    await signInAs('operatorB');
    await clickFromWebmail(first.id);
    await expect(page).toHaveURL(`${e2e.baseURL}/support`);
    // The support page reads its view once loaded: let it, before the cookies go (a read without them
    // would send this page to sign in on its own, racing the next click).
    await expect(page.locator('[data-view="ready"]')).toBeVisible();
    expect(await isRead(first.id)).toBe(true);

    const second = await notify('Opened from webmail while signed out');
    await page.context().clearCookies();
    await clickFromWebmail(second.id);
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=/);
    expect(await isRead(second.id)).toBe(false);
    await page.getByLabel('Email').fill(USERS.operatorB);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(`${e2e.baseURL}/support`);
    expect(await isRead(second.id)).toBe(true);
  } finally {
    await db.$disconnect();
  }
});
