// Roles per workflow in the browser (Z1, Z2, A2). People who hold a role on workflow A and only read
// workflow B see both workflows' rows, and the console offers each decision only on the rows where
// the server takes it: resolve on A's unknowns, approve or reject on A's four-eyes requests. The audit
// page's chain badge shows them the verification's status and age, not whole-trail figures. And an
// admin, on Users & roles, makes a person operator on one workflow only; that person, signing in on
// their own browser, sees that workflow's runs alone, and the change is on the audit trail.
// Everything here is made for this file (its own workflows, people and rows), so the seeded journeys
// keep their data.
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from '@playwright/test';
import { createDb, type Db } from '@/lib/db/client.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { addGrant, removeGrant } from '@/lib/auth/grant-commands.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { claimEffect, completeEffect, createRun, markUnknown, type Actor } from '@/lib/ledger/index.ts';
import type { Role } from '@/lib/db/generated/enums.ts';
import { expect, state, test } from './fixtures.ts';
import { PASSWORD } from './seed.ts';

const tag = randomUUID().slice(0, 8);
const wf = { a: `grants-a-${tag}`, b: `grants-b-${tag}` };
const runtime: Actor = { kind: 'runtime', id: 'grants-runtime', label: 'grants-runner', workflows: ['*'] };
const tool = `send_grants_${tag}`;
let db: Db;
let admin: Actor;

test.beforeAll(async () => {
  db = createDb(state().appUrl, 2);
  const a = state().seeded.users.admin;
  admin = { kind: 'user', id: a.id, label: a.email, role: 'admin' };
  await db.toolDefinition.create({
    data: {
      name: tool,
      actions: ['notice'],
      targetType: 'email',
      provider: 'sandbox',
      generatedInputs: ['body'],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
    },
  });
});
test.afterAll(async () => {
  await db.$disconnect();
});

/** A key of a fresh run of `workflow`, claimed and left unknown or done; its target names this file. */
async function keyIn(workflow: string, outcome: 'unknown' | 'done') {
  const run = await createRun({ db, actor: runtime }, { workflow, triggerId: `evt_${randomUUID()}` });
  const target = `grants-${tag}-${randomUUID().slice(0, 8)}@example.com`;
  const c = await claimEffect(
    { db, actor: runtime },
    { runId: run.runId, tool, action: 'notice', recordId: 'r1', target },
  );
  if (!c.claimed) throw new Error(`fresh key ${c.key} not claimed`);
  if (outcome === 'unknown') await markUnknown({ db, actor: runtime }, { key: c.key, evidence: { error: 'timeout' } });
  else await completeEffect({ db, actor: runtime }, { key: c.key, receipt: `msg-${target}` });
  return { key: c.key, target, runId: run.runId };
}

/** A person holding exactly these grants, written through the grant commands an admin's action runs. */
async function personWith(name: string, grants: [Role, string][]) {
  const email = `${name}-${tag}@example.com`;
  const u = await insertUser(db, { email, name, role: 'auditor', password: PASSWORD }, admin);
  for (const [role, workflow] of grants)
    await addGrant({ db, actor: admin }, { userId: u.id, role, workflow, newWorkflow: true, reason: 'their team' });
  const all = await db.roleGrant.findFirstOrThrow({ where: { userId: u.id, workflow: null } });
  await removeGrant({ db, actor: admin }, { grantId: all.id, reason: 'scoped to their team' });
  return email;
}

async function signIn(page: Page, email: string) {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Support lands on its queue, every other role on the runs.
  await expect(page).toHaveURL(/\/(runs|support)/);
  await expect(page.getByTestId('current-user')).toHaveText(email);
}

/** A page of a browser context of its own: another person at another computer. */
async function ownBrowser(browser: Browser) {
  const context = await browser.newContext({ baseURL: state().baseURL });
  return { page: await context.newPage(), close: () => context.close() };
}

test("Z1 support queue: support on A and auditor on B sees both, and resolve only on A's rows", async ({ page }) => {
  const a = await keyIn(wf.a, 'unknown');
  const b = await keyIn(wf.b, 'unknown');
  await signIn(
    page,
    await personWith('sup', [
      ['support', wf.a],
      ['auditor', wf.b],
    ]),
  );
  await page.goto(`/support?recipient=${encodeURIComponent(`grants-${tag}-`)}`);
  const rowA = page.getByTestId('unknown-row').filter({ hasText: a.target });
  const rowB = page.getByTestId('unknown-row').filter({ hasText: b.target });
  await expect(rowA).toHaveCount(1);
  await expect(rowB).toHaveCount(1);
  await expect(rowA.getByTestId('resolve-sent')).toBeEnabled();
  await expect(rowA.getByTestId('resolve-not-sent')).toBeEnabled();
  await expect(rowA.getByRole('checkbox')).toHaveCount(1);
  await expect(rowB.getByTestId('resolve-sent')).toHaveCount(0);
  await expect(rowB.getByTestId('resolve-not-sent')).toHaveCount(0);
  await expect(rowB.getByRole('checkbox')).toHaveCount(0);
  // "Select every unknown on this page" selects the rows this person may resolve: A's one.
  await page.getByLabel('Select every unknown on this page').check();
  await expect(page.getByTestId('bulk-selected')).toHaveText('1 selected');
});

test("Z1 four-eyes: operator on A and auditor on B decides A's requests only", async ({ page }) => {
  const operatorB = state().seeded.users.operatorB;
  const requester: Actor = { kind: 'user', id: operatorB.id, label: operatorB.email, role: 'operator' };
  for (const workflow of [wf.a, wf.b]) {
    const { key } = await keyIn(workflow, 'done');
    await requestBump({ db, actor: requester }, { keys: [key], reason: `resend on ${workflow}` });
  }
  await signIn(
    page,
    await personWith('op', [
      ['operator', wf.a],
      ['auditor', wf.b],
    ]),
  );
  await page.goto('/approvals');
  const requestA = page.getByTestId('approval-row').filter({ hasText: `resend on ${wf.a}` });
  const requestB = page.getByTestId('approval-row').filter({ hasText: `resend on ${wf.b}` });
  await expect(requestA).toHaveAttribute('data-status', 'open');
  await expect(requestB).toHaveAttribute('data-status', 'open');
  await expect(requestA.getByTestId('approve-request')).toBeEnabled();
  await expect(requestA.getByTestId('reject-request')).toBeEnabled();
  await expect(requestB.getByTestId('approve-request')).toHaveCount(0);
  await expect(requestB.getByTestId('reject-request')).toHaveCount(0);
});

test("A2/Z1 audit page: a scoped person sees the chain verified and its age, not the whole trail's entry id", async ({
  page,
  browser,
}) => {
  await signIn(page, await personWith('aud', [['auditor', wf.a]]));
  await page.goto('/audit');
  const badge = page.getByTestId('chain-badge');
  await expect(badge).toHaveAttribute('data-ok', 'true');
  await expect(badge).toContainText(/Chain verified .* ago/);
  await expect(badge).not.toContainText('#');
  // The same badge for an all-workflows auditor counts the verified entries.
  const other = await ownBrowser(browser);
  try {
    await signIn(other.page, state().seeded.users.auditor.email);
    await other.page.goto('/audit');
    await expect(other.page.getByTestId('chain-badge')).toContainText(/up to #[\d,]+/);
  } finally {
    await other.close();
  }
});

test('Z1 Users & roles: an admin makes a person operator on one workflow only; they see its runs alone; the trail has it', async ({
  page,
  browser,
  signInAs,
}) => {
  const runA = await keyIn(wf.a, 'done');
  const runB = await keyIn(wf.b, 'done');
  const email = `newop-${tag}@example.com`;
  await insertUser(db, { email, name: 'New operator', role: 'auditor', password: PASSWORD }, admin);

  await signInAs('admin');
  await page.goto('/admin/users');
  const row = page.getByTestId('user-row').filter({ hasText: email });
  await row.getByTestId(`grant-${email}`).click();
  const grant = page.getByRole('dialog').filter({ hasText: `Grant a role to ${email}` });
  await grant.getByLabel('Role').selectOption('operator');
  await grant.getByRole('textbox', { name: 'Workflow' }).fill(wf.a);
  await grant.getByLabel('Reason (required)').fill(`Runs the ${wf.a} campaign`);
  await grant.getByRole('button', { name: 'Grant', exact: true }).click();
  await expect(grant.getByRole('status')).toContainText(`Granted operator on ${wf.a}.`);
  await page.goto('/admin/users');
  await row.getByTestId(`ungrant-${email}: auditor on all workflows`).click();
  const remove = page.getByRole('dialog').filter({ hasText: `Remove ${email}: auditor on all workflows` });
  await remove.getByLabel('Reason (required)').fill('Operator on one workflow only');
  await remove.getByRole('button', { name: 'Remove', exact: true }).click();
  await expect(remove.getByRole('status')).toContainText('Removed.');
  await page.goto('/admin/users');
  await expect(row.getByTestId('grant')).toHaveCount(1);
  await expect(row.getByTestId('grant')).toContainText(`operator on ${wf.a}`);

  const person = await ownBrowser(browser);
  try {
    await signIn(person.page, email);
    await person.page.goto('/runs');
    const runs = person.page.getByTestId('run-row');
    await expect(runs).toHaveCount(await db.run.count({ where: { workflow: wf.a } }));
    await expect(runs.filter({ hasNotText: wf.a })).toHaveCount(0);
    await expect(person.page.getByLabel('Workflow').locator('option')).toHaveText(['All', wf.a]);
    // A direct link to the other workflow's run answers as if it did not exist.
    await person.page.goto(`/runs/${runB.runId}`);
    await expect(person.page.getByRole('heading', { name: 'Not found' })).toBeVisible();
    await person.page.goto(`/runs/${runA.runId}`);
    await expect(person.page.getByRole('heading', { name: 'Not found' })).toHaveCount(0);
    await expect(person.page.getByText(wf.a).first()).toBeVisible();
  } finally {
    await person.close();
  }

  await page.goto('/audit?action=grant');
  const entries = page.getByTestId('audit-row');
  const granted = entries.filter({ hasText: 'user.grant' }).filter({ hasText: `Runs the ${wf.a} campaign` });
  await expect(granted).toHaveCount(1);
  await expect(granted).toContainText(state().seeded.users.admin.email);
  await expect(
    entries.filter({ hasText: 'user.ungrant' }).filter({ hasText: 'Operator on one workflow only' }),
  ).toHaveCount(1);
});
