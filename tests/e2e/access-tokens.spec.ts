// Personal access tokens in the browser (docs/MANAGE.md): created on /account/tokens and shown once,
// listed by prefix, working on the management API served by Next, and refused once revoked.
import { expect, test } from './fixtures.ts';

test('a person creates a token (shown once), calls the management API with it, and revokes it', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('auditor');
  await page.goto('/runs');
  await page.getByRole('link', { name: 'Access tokens' }).click();
  await expect(page).toHaveURL(/\/account\/tokens$/);
  await expect(page.getByRole('heading', { name: 'Personal access tokens' })).toBeVisible();

  await page.getByRole('button', { name: 'Create token' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name (required)').fill('e2e laptop');
  await dialog.getByLabel('Expires after (required)').selectOption('30');
  await dialog.getByRole('button', { name: 'Create token' }).click();
  const shown = dialog.getByTestId('new-access-token');
  await expect(shown).toBeVisible();
  const token = (await shown.textContent())!.trim();
  expect(token).toMatch(/^elp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
  await page.keyboard.press('Escape');

  // Listed by its prefix only: loaded again, the page holds the secret nowhere.
  await page.reload();
  const row = page.getByTestId('access-tokens').getByRole('row').filter({ hasText: 'e2e laptop' });
  await expect(row).toContainText(`elp_${token.split('_')[1]}`);
  await expect(row).toContainText('active');
  expect(await page.content()).not.toContain(token.slice('elp_'.length + 13));

  const me = await page.request.get(`${e2e.baseURL}/api/v1/manage/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(me.status()).toBe(200);
  expect(await me.json()).toMatchObject({ email: 'ada.auditor@example.com' });

  await row.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
  // The page refreshes with the row revoked (its Revoke button, and the dialog with it, are gone).
  await expect(row).toContainText('revoked');
  await expect(row.getByRole('button', { name: 'Revoke' })).toHaveCount(0);
  const refused = await page.request.get(`${e2e.baseURL}/api/v1/manage/me`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(refused.status()).toBe(401);
});
