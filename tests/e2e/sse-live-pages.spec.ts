// Live pages in the browser: the support and replay pages show a change made elsewhere (here through
// the lib commands, as an agent or a colleague would) without a reload, and what the person had on
// screen stays: the open dialog with its typed text, the URL's filter, the scroll position and the
// page's own JavaScript state (a reload would wipe the marker set on window). The replay's progress
// bar follows the change feed to the end without polling. Runs after replay.spec.ts, whose first test
// counts the sandbox's deliveries from the start.
import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { createDb, type Db } from '@/lib/db/client.ts';
import {
  approvePlan,
  claimEffect,
  completeEffect,
  createRun,
  markUnknown,
  resolveUnknown,
  submitPlan,
  type Actor,
} from '@/lib/ledger/index.ts';
import { requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { expect, state, test } from './fixtures.ts';

const runtime: Actor = { kind: 'runtime', id: 'live-runtime', label: 'live-runner', workflows: ['*'] };
let db: Db;

test.beforeAll(() => {
  db = createDb(state().appUrl, 4);
});
test.afterAll(async () => {
  await db.$disconnect();
});

/** A run of `n` planned targets on a sandbox tool without four-eyes replays, plan approved. */
async function plannedRun(n: number) {
  const tag = randomUUID().slice(0, 8);
  const tool = `send_live_${tag}`;
  await db.toolDefinition.create({
    data: {
      name: tool,
      actions: ['notice'],
      targetType: 'email',
      provider: 'sandbox',
      generatedInputs: ['body'],
      supportsIdempotencyKey: true,
      supportsReceiptLookup: true,
      fourEyesReplay: false,
    },
  });
  const run = await createRun({ db, actor: runtime }, { workflow: 'live-pages', triggerId: `evt_live_${tag}` });
  const targets = Array.from({ length: n }, (_, i) => `live-${tag}-${i}@example.com`);
  const items = targets.map((target, i) => ({ tool, action: 'notice', recordId: `rec_${i}`, target }));
  const plan = await submitPlan({ db, actor: runtime }, { runId: run.runId, items });
  const operatorB = state().seeded.users.operatorB;
  await approvePlan(
    { db, actor: { kind: 'user', id: operatorB.id, label: operatorB.email, role: 'operator' } },
    { planId: plan.planId, itemsHash: plan.itemsHash },
  );
  const claim = (i: number) => claimEffect({ db, actor: runtime }, { runId: run.runId, ...items[i]! });
  return { runId: run.runId, targets, claim };
}

/** Set before the change; a reload (or a navigation) would lose it. */
async function markPage(page: Page) {
  await page.evaluate(() => ((window as unknown as { liveMarker: string }).liveMarker = 'still here'));
}
const marker = (page: Page) => page.evaluate(() => (window as unknown as { liveMarker?: string }).liveMarker);

test('live support queue: a new unknown appears and a resolved one leaves while a dialog stays open with its text', async ({
  page,
  signInAs,
}) => {
  test.setTimeout(180_000); // a loaded machine takes seconds per page load; nothing here waits on a timer
  const r = await plannedRun(3);
  const unknownAt = async (i: number) => {
    const c = await r.claim(i);
    if (!c.claimed) throw new Error('fresh key not claimed');
    await markUnknown({ db, actor: runtime }, { key: c.key, evidence: { error: 'timeout after send' } });
    return c.key;
  };
  await unknownAt(0);
  const second = await unknownAt(1);

  await signInAs('support');
  await page.goto('/support');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await markPage(page);
  const url = page.url();
  const row = (i: number) => page.getByTestId('unknown-row').filter({ hasText: r.targets[i]! });
  await expect(row(0)).toHaveCount(1);
  await row(0).getByTestId('resolve-sent').click();
  const dialog = page.getByRole('dialog').filter({ hasText: 'Resolve as sent' });
  await dialog.getByLabel('Reason (required)').fill('Checking the provider log first');

  // Another target becomes unknown (a runtime reported a timeout) and a colleague resolves the second.
  await unknownAt(2);
  await resolveUnknown(
    { db, actor: { kind: 'user', id: state().seeded.users.support.id, label: 'colleague', role: 'support' } },
    { key: second, epoch: 1, outcome: 'not_sent', reason: 'provider shows no such message' },
  );
  await expect(row(2)).toHaveCount(1, { timeout: 30_000 });
  await expect(row(1)).toHaveCount(0, { timeout: 30_000 });

  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel('Reason (required)')).toHaveValue('Checking the provider log first');
  expect(await marker(page)).toBe('still here');
  expect(page.url()).toBe(url);
  expect(Number(await page.getByTestId('live-status').getAttribute('data-refreshes'))).toBeGreaterThan(0);
});

test('F5: live replay page: counts follow a send made elsewhere and a replay runs to its report, filter and scroll kept', async ({
  page,
  signInAs,
}) => {
  test.setTimeout(180_000);
  const r = await plannedRun(40);
  await signInAs('operatorA');
  await page.setViewportSize({ width: 1280, height: 600 });
  await page.goto(`/runs/${r.runId}/replay?filter=will_send`);
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await expect(page.getByTestId('replay-will-send')).toHaveText('40');
  await markPage(page);
  await page.evaluate(() => window.scrollTo(0, 400));
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(400);

  // The agent sends one of them itself.
  const c = await r.claim(0);
  if (!c.claimed) throw new Error('fresh key not claimed');
  await completeEffect({ db, actor: runtime }, { key: c.key, epoch: c.epoch, receipt: `msg-live-${c.epoch}` });
  await expect(page.getByTestId('replay-will-send')).toHaveText('39', { timeout: 30_000 });
  await expect(page.getByTestId('replay-preview').locator('tr[data-will-send="yes"]')).toHaveCount(39);
  expect(await page.evaluate(() => window.scrollY)).toBe(400);
  expect(page.url()).toContain('filter=will_send');

  // A colleague requests and starts a replay of the rest; the worker sends through the sandbox.
  const operatorB = state().seeded.users.operatorB;
  const actor: Actor = { kind: 'user', id: operatorB.id, label: operatorB.email, role: 'operator' };
  const jobs = await startBoss(state().appUrl);
  try {
    const req = await requestReplay({ db, actor }, { runId: r.runId, confirmCount: 39, reason: 'live page check' });
    expect(req.status).toBe('approved');
    const panel = page.getByTestId('replay-panel').first();
    await expect(panel).toHaveAttribute('data-status', 'approved', { timeout: 30_000 });
    await startReplay({ db, actor, jobs }, { replayId: req.replayId });
    await expect(page.getByTestId('replay-progress').first()).toHaveAttribute('aria-valuenow', '39', {
      timeout: 120_000,
    });
    await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'completed', {
      timeout: 30_000,
    });
    await expect(page.getByTestId('replay-report').first().getByTestId('report-sent')).toHaveText('39');
    await expect(page.getByTestId('replay-will-send')).toHaveText('0', { timeout: 30_000 });
  } finally {
    await jobs.stop({ graceful: false });
  }
  expect(await marker(page)).toBe('still here');
  expect(page.url()).toContain('filter=will_send');
});
