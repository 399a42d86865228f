// What the operations-team walk of the console found in its text and filters, each in the browser:
// filters take what the screen shows (short run ids, workflow prefixes, keys), Back restores the
// filter typed, an inverted date range says so, the chain badge keeps its spaces, messages name no
// internal field ids, Add user asks a reason, one time format with its zone, the favicon, and the
// target page at 375 px with a long provider answer. Data of its own, so other files keep theirs.
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '@/lib/db/client.ts';
import { claimEffect, createRun, markUnknown, recordResponse, type Actor } from '@/lib/ledger/index.ts';
import { expect, state, test } from './fixtures.ts';
import { PASSWORD } from './seed.ts';

const runtime: Actor = { kind: 'runtime', id: 'text-runtime', label: 'text-runner', workflows: ['*'] };
const tag = randomUUID().slice(0, 8);
let db: Db;
test.beforeAll(() => {
  db = createDb(state().appUrl, 2);
});
test.afterAll(async () => {
  await db.$disconnect();
});

/** An unknown key of a fresh run of its own workflow, with a long provider answer on its attempt. */
async function unknownWithAnswer() {
  const workflow = `textfilter_${tag}_campaign`;
  const run = await createRun({ db, actor: runtime }, { workflow, triggerId: `evt_text_${randomUUID()}` });
  const target = `text-${tag}-${randomUUID().slice(0, 6)}@example.com`;
  const c = await claimEffect(
    { db, actor: runtime },
    { runId: run.runId, tool: 'send_email', action: 'receipt', recordId: 'order_text', target },
  );
  if (!c.claimed) throw new Error('fresh key not claimed');
  const long = 'x'.repeat(600);
  await recordResponse(
    { db, actor: runtime },
    {
      attemptId: c.attemptId,
      status: 504,
      headers: [['x-trace-of-a-very-long-provider-header-name', long]],
      body: new TextEncoder().encode(JSON.stringify({ error: 'gateway timeout', trace: long })),
    },
  );
  await markUnknown({ db, actor: runtime }, { key: c.key, evidence: { error: 'timeout after send', receipt: null } });
  return { runId: run.runId, workflow, target, key: c.key };
}

test('filters take what the screen shows: a short run id, a workflow prefix, a key', async ({ page, signInAs }) => {
  const u = await unknownWithAnswer();
  await signInAs('auditor');
  await page.goto(`/runs?q=${u.runId.slice(0, 8)}`);
  await expect(page.getByTestId('run-row')).toHaveCount(1);
  await expect(page.getByTestId('run-row')).toContainText(u.workflow);
  await page.goto(`/support?run=${u.runId.slice(0, 8)}`);
  await expect(page.getByTestId('unknown-row')).toHaveCount(1);
  await page.goto(`/support?workflow=${encodeURIComponent(`TEXTFILTER_${tag}`)}`);
  await expect(page.getByTestId('unknown-row')).toHaveCount(1);
  await expect(page.getByTestId('unknown-row')).toContainText(u.target);
  await page.goto(`/audit?target=${encodeURIComponent(u.key)}`);
  await expect(page.getByTestId('audit-row').first()).toBeVisible();
  for (const subject of await page.getByTestId('audit-subject').allTextContents()) expect(subject).toContain(u.target);
});

test('Back restores the filter as typed; an inverted date range on /runs says so', async ({ page, signInAs }) => {
  await signInAs('operatorA');
  await page.goto('/runs');
  const q = page.getByLabel('Event or run id');
  await q.fill('evt_order');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/q=evt_order/);
  await page.getByLabel('Event or run id').fill('evt_spring');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/q=evt_spring/);
  await page.goBack();
  await expect(page).toHaveURL(/q=evt_order/);
  await expect(page.getByLabel('Event or run id')).toHaveValue('evt_order');

  await page.goto('/runs?from=2026-12-02&to=2026-12-01');
  await expect(page.locator('#runs-filter-problem')).toBeVisible();
  await expect(page.getByText('The date range is inverted')).toBeVisible();
  await expect(page.getByLabel('To (exclusive)')).toHaveAttribute('aria-invalid', 'true');
});

test('the chain badge reads with its spaces; times are written one way, with their zone; the favicon is served', async ({
  page,
  signInAs,
}) => {
  await signInAs('auditor');
  const badge = page.getByTestId('chain-badge');
  await expect
    .poll(
      async () => {
        await page.goto('/audit');
        return badge.innerText();
      },
      { timeout: 60_000 },
    )
    .toMatch(/^Chain verified \d+ \S+ ago up to #[\d,]+/);
  const times = await page.locator('main time').allInnerTexts();
  expect(times.length).toBeGreaterThan(0);
  for (const t of times) expect(t).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  await page.goto('/approvals');
  for (const t of await page.locator('main time').allInnerTexts())
    expect(t).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);

  const icon = await page.request.get('/favicon.ico');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toMatch(/image/);
});

test('messages name fields by what the person sees; Add user asks a reason and records it', async ({
  page,
  signInAs,
}) => {
  await signInAs('support');
  await page.goto('/account/password');
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password (at least 12 characters)').fill('a-new-password-2026');
  await page.getByLabel('New password again').fill('a-new-password-2026-typo');
  await page.getByRole('button', { name: 'Save the new password' }).click();
  await expect(page.getByText('the two new passwords differ', { exact: false })).toBeVisible();
  await expect(page.locator('main')).not.toContainText('confirmPassword');

  await signInAs('admin');
  await page.goto('/admin/users');
  await page.getByTestId('add-user').click();
  const dialog = page.getByRole('dialog', { name: 'Add a user' });
  const email = `added-${tag}@example.com`;
  await dialog.getByLabel('Email (required)').fill(email);
  await dialog.getByLabel('Name (required)').fill('Added person');
  await dialog.getByLabel('Initial password (required)').fill('too-short');
  await dialog.getByLabel('Reason (required)').fill(`Joins the receipts team ${tag}`);
  await dialog.getByRole('button', { name: 'Create user' }).click();
  await expect(dialog.getByRole('alert').first()).toBeVisible();
  await expect(dialog).not.toContainText(/\b(password|email|name|reason): /);
  await dialog.getByLabel('Initial password (required)').fill('long-enough-password-2026');
  await dialog.getByRole('button', { name: 'Create user' }).click();
  await expect(dialog.getByRole('status')).toHaveText(`Created ${email}.`);

  await signInAs('auditor');
  await page.goto('/audit?action=user.create');
  await expect(page.getByTestId('audit-row').filter({ hasText: `Joins the receipts team ${tag}` })).toHaveCount(1);
});

test('375 px: a target with a long provider answer fits the screen; evidence reads "none", never "null"', async ({
  page,
  signInAs,
}) => {
  const u = await unknownWithAnswer();
  await page.setViewportSize({ width: 375, height: 800 });
  await signInAs('auditor');
  await page.goto(`/target?key=${encodeURIComponent(u.key)}`);
  await expect(page.getByTestId('current-state')).toContainText('Unknown');
  await expect(page.getByTestId('raw-response')).toBeVisible();
  const width = await page.evaluate(() => document.scrollingElement!.scrollWidth);
  expect(width).toBeLessThanOrEqual(375);
  const unknown = page.getByTestId('transition').filter({ hasText: 'timeout after send' });
  await expect(unknown.locator('dd', { hasText: /^none$/ })).toHaveCount(1);
  for (const text of await page.getByTestId('transition').allInnerTexts()) expect(text).not.toContain('null');
});
