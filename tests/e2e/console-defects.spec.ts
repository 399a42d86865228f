// Console defects of the "console for real teams" issue, each in a real browser.
import { expect, test } from './fixtures.ts';

test('Z1 navigation: an unknown URL shows the not-found page inside the console, with its navigation', async ({
  page,
  signInAs,
}) => {
  await signInAs('auditor');
  const response = await page.goto('/no-such-page/at-all');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Runs' })).toBeVisible();
  await expect(page.getByTestId('current-role')).toHaveText('auditor');
  const api = await page.request.get('/api/v1/no-such-route');
  expect(api.status()).toBe(404);
  expect(api.headers()['content-type']).toContain('application/problem+json');
});

test('A5 audit: the action filter matches anywhere in the name, lists the actions, and names an inverted range', async ({
  page,
  signInAs,
}) => {
  await signInAs('auditor');
  await page.goto('/audit');
  await expect(page.getByTestId('audit-actions').locator('option[value="effect.revoke"]')).toHaveCount(1);
  // "create" starts no action name: a prefix filter would find nothing.
  await page.getByLabel('Action (any part of the name)').fill('create');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/action=create/);
  const actions = page.getByTestId('audit-row').locator('td:nth-child(4)');
  await expect(actions.first()).toBeVisible();
  const names = await actions.allTextContents();
  for (const name of names) expect(name).toContain('create');
  expect(names).toContain('user.create');

  await page.goto('/audit?from=2026-12-02T10%3A00&to=2026-12-01T10%3A00');
  await expect(page.locator('#audit-filter-problem')).toContainText('must be later than');
  await expect(page.getByLabel('To', { exact: true })).toHaveAttribute('aria-invalid', 'true');
});

test('Z6 admin: a key for a workflow that never ran is refused by name; a created secret is visible and copyable in the dialog', async ({
  page,
  signInAs,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signInAs('admin');
  await page.goto('/admin/keys');
  await page.getByRole('button', { name: 'Create runtime key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name (required)').fill('typo-key');
  await dialog.getByLabel('Workflows (comma separated, * for all) (required)').fill('welcome-campaing');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await expect(dialog.getByText('no workflow "welcome-campaing" has ever run')).toBeVisible();

  await dialog.getByLabel('Workflows (comma separated, * for all) (required)').fill('*');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const secret = dialog.getByTestId('new-key-secret');
  await expect(secret).toBeVisible();
  const value = (await secret.textContent())!.trim();
  expect(value).toMatch(/^elk_/);
  // A click reaches only what is on top: behind the modal's backdrop it would time out.
  await dialog.getByRole('button', { name: 'Copy secret' }).click({ timeout: 5_000 });
  await expect(dialog.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(value);
});

test('S4 support: the reconciliation evidence of an unknown reads as labelled fields, not raw JSON', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('support');
  await page.goto('/support');
  const evidence = page
    .getByTestId('unknown-row')
    .filter({ hasText: e2e.seeded.unknownTarget })
    .getByTestId('evidence');
  const fields = evidence.getByTestId('field-list');
  await expect(fields.locator('dt', { hasText: /^Lookup$/ })).toBeVisible();
  await expect(fields.locator('dd', { hasText: /^miss after settle window$/ })).toBeVisible();
  await expect(fields.locator('dt', { hasText: /^Checked at$/ })).toBeVisible();
  await expect(evidence).not.toContainText('{"');
});

test('A1 audit: subjects read as names (a person by email, a run by workflow and event), not bare ids', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('auditor');
  await page.goto('/audit?action=user.create');
  const subjects = page.getByTestId('audit-row').getByTestId('audit-subject');
  await expect(subjects.filter({ hasText: e2e.seeded.users.support.email })).toHaveCount(1);
  for (const text of await subjects.allTextContents()) expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  await page.goto('/audit?action=run.create');
  await expect(page.getByRole('link', { name: 'run receipts · evt_order_77812' })).toHaveAttribute(
    'href',
    `/runs/${e2e.seeded.liveRunId}`,
  );
});

test('S4 support: the queue filters by recipient, workflow and run; selected unknowns resolve in bulk, each audited', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('support');
  await page.goto(`/support?recipient=${encodeURIComponent(e2e.seeded.unknownTarget.slice(0, 4))}`);
  const rows = page.getByTestId('unknown-row');
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText(e2e.seeded.unknownTarget);
  await page.goto(`/support?run=${e2e.seeded.liveRunId}`);
  await expect(rows.filter({ hasText: 'chen@example.com' })).toHaveCount(0);
  await expect(rows.filter({ hasText: e2e.seeded.unknownTarget })).toHaveCount(1);

  // The crashed spring campaign left one unknown: chen.
  await page.goto('/support');
  await page.getByLabel('Workflow').fill('spring_campaign');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/workflow=spring_campaign/);
  await expect(rows).toHaveCount(1);
  await expect(rows).toContainText('chen@example.com');
  await expect(page.getByRole('button', { name: 'Resolve 0 as not sent' })).toBeDisabled();
  await page.getByLabel('Select every unknown on this page').check();
  await expect(page.getByTestId('bulk-selected')).toHaveText('1 selected');
  await page.getByTestId('bulk-not-sent').click();
  const dialog = page.getByRole('dialog', { name: 'Resolve 1 unknown as not sent' });
  await dialog.getByLabel('Reason (required)').fill('Provider log shows the call never left');
  await dialog.getByRole('button', { name: 'Mark as not sent' }).click();
  await expect(dialog.getByRole('status')).toHaveText('1 resolved.');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(rows).toHaveCount(0);
  await expect(page.getByText('No unknown matches these filters')).toBeVisible();

  await signInAs('auditor');
  await page.goto('/audit?action=effect.resolve_not_sent');
  await expect(page.getByTestId('audit-row').filter({ hasText: 'Provider log shows the call never left' })).toHaveCount(
    1,
  );
});
