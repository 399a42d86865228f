// Notifications in the browser: the unread count in the navigation, the inbox with its link to the
// request, mark read, and the per-kind preferences on the account page (saved and shown again).
import { expect, test } from './fixtures.ts';

test('the approver sees the waiting request in the navigation count and the inbox, follows its link, marks it read; preferences save', async ({
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
  const link = waiting.getByRole('link', { name: /Epoch bump of 1 key\(s\) waits for your approval/ });
  await expect(link).toHaveAttribute('href', /^\/approvals#approval-[0-9a-f-]{36}$/);

  await waiting.getByTestId('mark-read').click();
  if (before === 1) await expect(badge).toHaveCount(0);
  else await expect(badge).toHaveText(new RegExp(`^${before - 1}\\b`));
  await expect(page.getByTestId('notification').filter({ hasText: 'waits for your approval' }).first()).toHaveAttribute(
    'data-read',
    'yes',
  );

  const anchor = (await link.getAttribute('href'))!.split('#')[1]!;
  await link.click();
  await expect(page).toHaveURL(/\/approvals#approval-/);
  await expect(page.locator(`[id="${anchor}"]`)).toBeVisible();

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
