// One journey per persona from issue 4, in a real Chromium against `next start`.
import { readFileSync } from 'node:fs';
import { expect, test } from './fixtures.ts';
import { PASSWORD, USERS } from './seed.ts';

test('Z4: sign-in through the form, and a wrong password is refused with a clear message', async ({ page }) => {
  await page.goto('/runs');
  await expect(page).toHaveURL(/\/sign-in/);
  await page.getByLabel('Email').fill(USERS.auditor);
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('Email or password is not right.')).toBeVisible();
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/runs/);
  await expect(page.getByTestId('current-role')).toHaveText('auditor');
});

test('P1/P2/S5 operator: approves a submitted plan, then revokes a key with a reason', async ({ page, signInAs }) => {
  await signInAs('operatorA');
  await page.goto('/plans');
  await page
    .getByRole('link', { name: /spring_campaign/ })
    .first()
    .click();
  await expect(page.getByTestId('plan-count')).toHaveText('6');
  await page.getByTestId('approve-plan').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Note').fill('Recipients match the campaign segment');
  await dialog.getByRole('button', { name: 'Approve' }).click();
  await expect(dialog.getByRole('status')).toContainText('Plan approved and frozen');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByText('This plan is approved')).toBeVisible();

  await page
    .getByRole('link', { name: /^[0-9a-f]{8}$/ })
    .first()
    .click();
  const row = page
    .getByTestId('target-row')
    .filter({ has: page.getByRole('link', { name: 'ana@example.com', exact: true }) });
  await expect(row).toHaveAttribute('data-state', 'done');
  await row.getByRole('link', { name: 'ana@example.com', exact: true }).click();
  await page.getByTestId('revoke').click();
  const revoke = page.getByRole('dialog');
  await revoke.getByRole('button', { name: 'Revoke' }).click();
  await expect(revoke.getByRole('alert')).toBeVisible(); // reason is required
  await revoke.getByLabel('Reason (required)').fill('Customer unsubscribed before the send');
  await revoke.getByRole('button', { name: 'Revoke' }).click();
  await expect(revoke.getByRole('status')).toContainText('Revoked');
  // The page behind the open dialog already shows the new state (no reload, no close needed).
  await expect(page.getByTestId('current-state')).toContainText('Revoked');
  await expect(revoke.getByRole('status')).toContainText('Revoked');
  await revoke.getByRole('button', { name: 'Close' }).click();
  await expect(page.getByTestId('current-state')).toContainText('Revoked');
  await expect(page.getByTestId('revoke')).toHaveCount(0);
  await expect(page.getByTestId('transition').last()).toContainText('Customer unsubscribed before the send');
});

test('S4 support: resolves an unknown from the queue as sent, with a receipt', async ({ page, signInAs, e2e }) => {
  await signInAs('support');
  await page.goto('/support');
  const row = page.getByTestId('unknown-row').filter({ hasText: e2e.seeded.unknownTarget });
  await expect(row).toContainText('miss after settle window');
  await row.getByTestId('resolve-sent').click();
  const dialog = page.getByRole('dialog').filter({ hasText: 'Resolve as sent' });
  await dialog.getByLabel('Receipt or evidence reference (required)').fill('msg_found_in_provider_log_4411');
  await dialog.getByLabel('Reason (required)').fill('Provider dashboard shows it delivered at 10:02');
  await dialog.getByRole('button', { name: 'Mark as sent' }).click();
  await expect(dialog.getByRole('status')).toContainText('Resolved as sent');
  await page.goto('/support');
  await expect(page.getByTestId('unknown-row').filter({ hasText: e2e.seeded.unknownTarget })).toHaveCount(0);
});

test('Z3 four-eyes: one operator requests an epoch bump, the same operator cannot approve it, another one does', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('operatorA');
  await page.goto(`/runs/${e2e.seeded.liveRunId}?q=${encodeURIComponent(e2e.seeded.bumpTarget)}`);
  await page.getByRole('link', { name: e2e.seeded.bumpTarget }).click();
  await page.getByTestId('bump').click();
  const dialog = page.getByRole('dialog').filter({ hasText: 'Bump the epoch' });
  await dialog.getByLabel('Reason (required)').fill('Customer asked for the receipt again');
  await dialog.getByRole('button', { name: 'Request bump' }).click();
  await expect(dialog.getByRole('status')).toContainText('awaits another operator');

  await page.goto('/approvals');
  const request = page.getByTestId('approval-row').filter({ hasText: 'Customer asked for the receipt again' });
  await expect(request).toHaveAttribute('data-status', 'open');
  await expect(request.getByTestId('approve-request')).toHaveCount(0);
  await expect(request).toContainText('another operator must approve it');

  await signInAs('operatorB');
  await page.goto('/approvals');
  await request.getByTestId('approve-request').click();
  const approve = page.getByRole('dialog').filter({ hasText: 'Approve the bump' });
  await approve.getByLabel('Comment (optional)').fill('Receipt request confirmed with the customer');
  await approve.getByRole('button', { name: 'Approve and bump' }).click();
  await expect(approve.getByRole('status')).toContainText('1 bumped');
  await page.goto('/approvals');
  await expect(request.getByTestId('decision')).toHaveText(
    'Approved by oscar.operator@example.com: Receipt request confirmed with the customer',
  );
  await page.goto(`/runs/${e2e.seeded.liveRunId}?q=${encodeURIComponent(e2e.seeded.bumpTarget)}`);
  const row = page.getByTestId('target-row').filter({ hasText: e2e.seeded.bumpTarget });
  await expect(row).toHaveAttribute('data-state', 'pending');
  await expect(row).toContainText('oscar.operator@example.com');
});

test('A5/A2 auditor: filters the trail, sees the chain verified, downloads the CSV and finds the row', async ({
  page,
  signInAs,
}) => {
  await signInAs('auditor');
  await page.goto('/audit');
  await expect(page.getByTestId('chain-badge')).toHaveAttribute('data-ok', 'true');
  await page.getByLabel('Action (any part of the name)').fill('plan.approve');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/action=plan.approve/);
  const rows = page.getByTestId('audit-row');
  await expect(rows.first()).toContainText('plan.approve');
  await expect(rows.filter({ hasText: 'oscar.operator@example.com' })).toHaveCount(1);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  const csv = readFileSync((await download.path())!, 'utf8');
  const lines = csv.trim().split('\r\n');
  expect(lines[0]).toContain('actor_label');
  const row = lines.find((l) => l.includes('oscar.operator@example.com'));
  expect(row).toBeDefined();
  expect(row).toContain('"plan.approve"');
  expect(row).toContain('list checked against the CRM export');
  expect(lines.slice(1).every((l) => l.includes('"plan.approve"'))).toBe(true);
});

test('Z4 admin: adds a user, who signs in; once disabled, their very next request is refused', async ({
  page,
  signInAs,
  browser,
  e2e,
}) => {
  await signInAs('admin');
  await page.goto('/admin/users');
  await page.getByTestId('add-user').click();
  const add = page.getByRole('dialog').filter({ hasText: 'Add a user' });
  await add.getByLabel('Email (required)').fill('temp.support@example.com');
  await add.getByLabel('Name (required)').fill('Temp Support');
  await add.getByLabel('Role').selectOption('support');
  await add.getByLabel('Initial password (required)').fill('short');
  await add.getByLabel('Reason (required)').fill('Joins the support rota this week');
  await add.getByRole('button', { name: 'Create user' }).click();
  // Next to its field the message reads without the field's internal id.
  await expect(add.getByText('At least 12 characters', { exact: true })).toBeVisible();
  await expect(add.getByText('password:')).toHaveCount(0);
  await add.getByLabel('Initial password (required)').fill('a-temporary-password');
  await add.getByRole('button', { name: 'Create user' }).click();
  await expect(add.getByRole('status')).toContainText('Created temp.support@example.com');
  await add.getByRole('button', { name: 'Close' }).click();

  const other = await browser.newContext({ baseURL: e2e.baseURL });
  const theirs = await other.newPage();
  await theirs.goto('/sign-in');
  await theirs.getByLabel('Email').fill('temp.support@example.com');
  await theirs.getByLabel('Password').fill('a-temporary-password');
  await theirs.getByRole('button', { name: 'Sign in' }).click();
  // A password the admin chose is replaced by the person's own before anything else (Z7).
  await expect(theirs).toHaveURL(/\/account\/password/);
  await theirs.getByLabel('Current password').fill('a-temporary-password');
  await theirs.getByLabel('New password (at least 12 characters)').fill('temp-support-own-password');
  await theirs.getByLabel('New password again').fill('temp-support-own-password');
  await theirs.getByRole('button', { name: 'Save the new password' }).click();
  await expect(theirs).toHaveURL(/\/sign-in\?reason=password_changed/);
  await theirs.getByLabel('Email').fill('temp.support@example.com');
  await theirs.getByLabel('Password').fill('temp-support-own-password');
  await theirs.getByRole('button', { name: 'Sign in' }).click();
  await expect(theirs.getByTestId('current-role')).toHaveText('support');

  await page.reload();
  await page.getByTestId('toggle-temp.support@example.com').click();
  const disable = page.getByRole('dialog').filter({ hasText: 'Disable temp.support@example.com' });
  await disable.getByLabel('Reason (required)').fill('Contract ended');
  await disable.getByRole('button', { name: 'Disable' }).click();
  await expect(disable.getByRole('status')).toContainText('Disabled');

  await theirs.goto('/support');
  await expect(theirs).toHaveURL(/\/sign-in\?reason=disabled/);
  await expect(theirs.getByText('This account is disabled')).toBeVisible();
  await other.close();
});
