// The decision insights page (/insights): reached from the navigation, a table per workflow with its
// plan approvals counted and the approval rate drawn; a bad period named on its field; the CSV
// download holds the same workflow's line.
import { randomUUID } from 'node:crypto';
import { createDb } from '@/lib/db/client.ts';
import { createRun } from '@/lib/ledger/commands/create-run.ts';
import { approvePlan, submitPlan } from '@/lib/ledger/index.ts';
import { expect, test } from './fixtures.ts';

const system = { kind: 'system' as const, id: 'e2e', label: 'insights spec' };

test('decision insights: a workflow’s plan approvals counted with their rate, a bad period named, the CSV export', async ({
  page,
  signInAs,
  e2e,
}) => {
  const workflow = `insights-e2e-${randomUUID().slice(0, 8)}`;
  const db = createDb(e2e.appUrl, 1);
  try {
    const { runId } = await createRun({ db, actor: system }, { workflow, triggerId: `evt_in_${randomUUID()}` });
    const plan = await submitPlan(
      { db, actor: system },
      { runId, items: [{ tool: 'send_email', action: 'receipt', recordId: 'r1', target: `in-${randomUUID()}@x.io` }] },
    );
    const op = e2e.seeded.users.operatorA;
    await approvePlan(
      { db, actor: { kind: 'user', id: op.id, label: op.email, role: 'operator' } },
      { planId: plan.planId, itemsHash: plan.itemsHash },
    );
  } finally {
    await db.$disconnect();
  }

  await signInAs('auditor');
  await page.goto('/runs');
  await page.getByRole('link', { name: 'Decision insights' }).first().click();
  await expect(page.getByRole('heading', { level: 1, name: 'Decision insights' })).toBeVisible();
  const table = page.locator(`[data-testid="insights-table"][data-workflow="${workflow}"]`);
  const total = table.locator('[data-testid="insights-row"][data-kind="plan"][data-period="total"]');
  await expect(total.locator('[data-field="requested"]')).toHaveText('1');
  await expect(total.locator('[data-field="approved"]')).toHaveText('1');
  await expect(total.getByTestId('approval-rate')).toHaveText('100%');

  await page.getByLabel('Period').selectOption('week');
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/period=week/);
  await expect(table.locator('[data-testid="insights-row"][data-kind="plan"]').nth(1)).toHaveAttribute(
    'data-period',
    /^\d{4}-W\d{2}$/,
  );

  await page.goto('/insights?period=month');
  // The refusal is shown under the field it names (Next's route announcer is an alert too).
  await expect(page.getByRole('alert').filter({ hasText: '"period"' })).toHaveText(
    '"period" must be one of day, week, not "month"',
  );

  const csv = await page.request.get('/api/console/insights');
  expect(csv.status()).toBe(200);
  const lines = (await csv.text()).trimEnd().split('\r\n');
  expect(lines[0]).toMatch(/^workflow,kind,period,requested,approved,rejected,expired,cancelled,open,/);
  expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^"${workflow}","plan",,"1","1","0",`)));
});
