// Z4 in a real browser: a session cookie saved before "Sign out" no longer opens the console after it.
import { randomUUID } from 'node:crypto';
import { expect, test } from './fixtures.ts';
import { PASSWORD, USERS } from './seed.ts';

test('Z4: after Sign out, a saved copy of the session cookie is refused (pages go to sign-in, routes 401)', async ({
  page,
  browser,
  e2e,
}) => {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(USERS.support);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Support lands on its queue.
  await expect(page).toHaveURL(/\/support/);
  await expect(page.getByTestId('current-user')).toHaveText(USERS.support);

  const saved = (await page.context().cookies()).find((c) => c.name === 'next-auth.session-token');
  expect(saved).toBeDefined();
  // A console route: with the live session an unknown replay is a 404, so a 401 later means the session ended.
  const progress = `/api/console/replays/${randomUUID()}/progress`;
  expect((await page.request.get(progress)).status()).toBe(404);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in\?reason=signed_out/);
  await expect(page.getByRole('status')).toHaveText('You are signed out.');

  // Replay the saved cookie from a fresh browser context, as someone who copied it would.
  const replay = await browser.newContext({ baseURL: e2e.baseURL });
  try {
    await replay.addCookies([{ ...saved!, expires: Math.floor(Date.now() / 1000) + 3600 }]);
    const other = await replay.newPage();
    await other.goto('/runs');
    await expect(other).toHaveURL(/\/sign-in\?reason=signed_out/);
    await expect(other.getByTestId('current-user')).toHaveCount(0);
    expect((await replay.request.get(progress, { maxRedirects: 0 })).status()).toBe(401);
  } finally {
    await replay.close();
  }
});

test('Z7: a person whose password was handed to them is sent to choose their own, then signs in with it', async ({
  page,
  e2e,
}) => {
  const { createDb } = await import('@/lib/db/client.ts');
  const { insertUser } = await import('@/lib/auth/users.ts');
  const db = createDb(e2e.appUrl, 1);
  const email = `new-admin-${randomUUID().slice(0, 8)}@example.com`;
  const handedOver = 'handed-over-one-time-pw';
  try {
    await insertUser(
      db,
      { email, name: 'New admin', role: 'admin', password: handedOver },
      { kind: 'system', id: 'user-create', label: 'npm run user:create' },
      { mustChangePassword: true },
    );
  } finally {
    await db.$disconnect();
  }
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(handedOver);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/account\/password/);
  await expect(page.getByRole('status')).toContainText('Choose your own');
  await page.goto('/admin/users');
  await expect(page).toHaveURL(/\/account\/password/);

  const mine = 'my-very-own-password-2026';
  await page.getByLabel('Current password').fill(handedOver);
  await page.getByLabel('New password (at least 12 characters)').fill(mine);
  await page.getByLabel('New password again').fill(`${mine}-typo`);
  await page.getByRole('button', { name: 'Save the new password' }).click();
  await expect(page.getByText('the two new passwords differ')).toBeVisible();
  await page.getByLabel('New password again').fill(mine);
  await page.getByRole('button', { name: 'Save the new password' }).click();
  await expect(page).toHaveURL(/\/sign-in\?reason=password_changed/);

  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(mine);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/runs/);
  await page.goto('/admin/users');
  await expect(page).toHaveURL(/\/admin\/users/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
});

test('after sign-in the page goes to callbackUrl only when it is a path of the console, never another site', async ({
  page,
  e2e,
}) => {
  await page.goto(`/sign-in?callbackUrl=${encodeURIComponent('//evil.example/phish')}`);
  await page.getByLabel('Email').fill(USERS.support);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Another site is ignored: support lands on its own queue.
  await expect(page).toHaveURL(`${e2e.baseURL}/support`);
  // The queue reads its view once it has loaded: wait for it, or the cookies cleared below would
  // turn that read into a 401, and its way to sign-in would race the next navigation.
  await expect(page.locator('[data-view="ready"]')).toBeVisible();

  await page.context().clearCookies();
  await page.goto(`/sign-in?callbackUrl=${encodeURIComponent('/runs')}`);
  await page.getByLabel('Email').fill(USERS.support);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${e2e.baseURL}/runs`);
});
