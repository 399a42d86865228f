// Deciding where a target is shown (the operations-team walk of the console): a never-sent planned
// target is revocable on its run; a finished replay's report keeps its figure and shows a later
// change as its own "since then" line, with the replay and its people named and linked; approvers
// see each key's recipient, state and epoch; controls appear only for those who may act; the support
// dialog stays open, saying so, when someone else decides the same key. Each made for this file.
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '@/lib/db/client.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import {
  approvePlan,
  claimEffect,
  completeEffect,
  createRun,
  markUnknown,
  resolveUnknown,
  submitPlan,
} from '@/lib/ledger/index.ts';
import type { Actor } from '@/lib/ledger/index.ts';
import { requestReplay, startBoss, startReplay } from '@/lib/replay/index.ts';
import { expect, state, test } from './fixtures.ts';

const runtime: Actor = { kind: 'runtime', id: 'team-runtime', label: 'team-runner', workflows: ['*'] };
let db: Db;
test.beforeAll(() => {
  db = createDb(state().appUrl, 3);
});
test.afterAll(async () => {
  await db.$disconnect();
});

const person = (k: 'operatorB' | 'support'): Actor => {
  const u = state().seeded.users[k];
  return { kind: 'user', id: u.id, label: u.email, role: k === 'support' ? 'support' : 'operator' };
};

/** A run of `n` planned targets on a sandbox tool without four-eyes replays, plan approved. */
async function plannedRun(n: number) {
  const tag = randomUUID().slice(0, 8);
  const tool = `send_team_${tag}`;
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
  const run = await createRun({ db, actor: runtime }, { workflow: 'team-pages', triggerId: `evt_team_${tag}` });
  const targets = Array.from({ length: n }, (_, i) => `team-${tag}-${i}@example.com`);
  const items = targets.map((target, i) => ({ tool, action: 'notice', recordId: `rec_${i}`, target }));
  const plan = await submitPlan({ db, actor: runtime }, { runId: run.runId, items });
  await approvePlan({ db, actor: person('operatorB') }, { planId: plan.planId, itemsHash: plan.itemsHash });
  const unknownAt = async (i: number) => {
    const c = await claimEffect({ db, actor: runtime }, { runId: run.runId, ...items[i]! });
    if (!c.claimed) throw new Error('fresh key not claimed');
    await markUnknown({ db, actor: runtime }, { key: c.key, evidence: { error: 'timeout after send', receipt: null } });
    return c.key;
  };
  return { runId: run.runId, tool, targets, unknownAt };
}

test('S5: a planned target never sent is revocable where the run lists it, and stays out of the replay', async ({
  page,
  signInAs,
}) => {
  const r = await plannedRun(2);
  await signInAs('operatorA');
  await page.goto(`/runs/${r.runId}?view=never_sent`);
  const box = page.getByLabel(`Select ${r.targets[0]}`);
  await expect(box).toBeEnabled();
  await box.check();
  await page.getByRole('button', { name: 'Revoke 1', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke 1 target' });
  await dialog.getByLabel('Reason (required)').fill('Unsubscribed yesterday');
  await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
  await expect(dialog.getByRole('status')).toHaveText('1 revoked.');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await page.goto(`/runs/${r.runId}/replay`);
  await expect(page.getByTestId('replay-will-send')).toHaveText('1');
});

test('F5: a finished report keeps its figure; a later resolution is a "since then" line; replay and people are named and linked', async ({
  page,
  signInAs,
}) => {
  test.setTimeout(180_000);
  const r = await plannedRun(3);
  const unknownKey = await r.unknownAt(0);
  const jobs = await startBoss(state().appUrl);
  try {
    const actor = person('operatorB');
    const req = await requestReplay({ db, actor }, { runId: r.runId, confirmCount: 2, reason: 'frozen report check' });
    await startReplay({ db, actor, jobs }, { replayId: req.replayId });
    await signInAs('auditor');
    await page.goto(`/runs/${r.runId}/replay`);
    const report = page.getByTestId('replay-report').first();
    await expect(report.getByTestId('report-eo-after')).toHaveText('66.7% (2/3)', { timeout: 120_000 });
    await expect(report.getByTestId('report-since-then')).toHaveCount(0);

    await resolveUnknown(
      { db, actor: person('support') },
      { key: unknownKey, epoch: 1, outcome: 'sent', receipt: 'msg-found-later', reason: 'found in the provider log' },
    );
    await page.reload();
    await expect(report.getByTestId('report-eo-after')).toHaveText('66.7% (2/3)');
    await expect(report.getByTestId('report-since-then')).toContainText('100.0% (3/3)');
    const json = async () =>
      (await (await page.request.get(`/api/console/replays/${req.replayId}/report?format=json`)).json()) as {
        report: { exactlyOnceAfter: { exactlyOnce: number } };
      };
    expect((await json()).report.exactlyOnceAfter.exactlyOnce).toBe(2);

    const panel = page.getByTestId('replay-panel').first();
    await expect(panel.getByTestId('replay-name')).toHaveText(`Replay ${req.replayId.slice(0, 8)}`);
    await expect(panel.getByRole('link', { name: actor.label })).toHaveAttribute(
      'href',
      `/audit?actor=${encodeURIComponent(actor.label)}`,
    );
    await expect(report.getByTestId('replay-name')).toHaveAttribute(
      'href',
      `/runs/${r.runId}/replay#replay-${req.replayId}`,
    );
    await expect(panel).not.toContainText(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/);
    await expect(report).not.toContainText('null');
  } finally {
    await jobs.stop({ graceful: false });
  }
});

test('Z3: the approve dialog lists each key with its recipient, state and epoch, not only the set hash', async ({
  page,
  signInAs,
}) => {
  const r = await plannedRun(1);
  const c = await claimEffect(
    { db, actor: runtime },
    { runId: r.runId, tool: r.tool, action: 'notice', recordId: 'rec_0', target: r.targets[0]! },
  );
  if (!c.claimed) throw new Error('fresh key not claimed');
  await completeEffect({ db, actor: runtime }, { key: c.key, epoch: c.epoch, receipt: 'msg-team-1' });
  const a = state().seeded.users.operatorA;
  const reason = `Template fixed ${randomUUID().slice(0, 8)}`;
  await requestBump(
    { db, actor: { kind: 'user', id: a.id, label: a.email, role: 'operator' } },
    { keys: [c.key], reason },
  );
  await signInAs('operatorB');
  await page.goto('/approvals');
  await page.getByTestId('approval-row').filter({ hasText: reason }).getByTestId('approve-request').click();
  const dialog = page.getByRole('dialog', { name: 'Approve the bump of 1 key' });
  const item = dialog.getByTestId('approval-item');
  await expect(item).toContainText(r.targets[0]!);
  await expect(item).toContainText('epoch 1 → 2');
  await expect(item).toContainText('Done');
});

test('Z1: read-only roles get no decision controls: no Force replay, no row checkboxes, no resolve buttons', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('auditor');
  await page.goto(`/runs/${e2e.replay.runId}`);
  await expect(page.getByTestId('view-replays')).toBeVisible();
  await expect(page.getByTestId('force-replay')).toHaveCount(0);
  await expect(page.getByTestId('target-row').first()).toBeVisible();
  await expect(page.getByTestId('run-table').getByRole('checkbox')).toHaveCount(0);
  await page.goto('/support');
  await expect(page.getByTestId('unknown-row').first()).toBeVisible();
  await expect(page.getByTestId('resolve-sent')).toHaveCount(0);
  await expect(page.getByLabel('Select every unknown on this page')).toBeHidden();
  await signInAs('support');
  await page.goto(`/runs/${e2e.replay.runId}`);
  await expect(page.getByTestId('target-row').first()).toBeVisible();
  await expect(page.getByTestId('force-replay')).toHaveCount(0);
  await expect(page.getByTestId('run-table').getByRole('checkbox')).toHaveCount(0);
});

test('S4: the support dialog stays open and says so when someone else decides the same key meanwhile', async ({
  page,
  signInAs,
}) => {
  const r = await plannedRun(1);
  const key = await r.unknownAt(0);
  await signInAs('support');
  await page.goto('/support');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-state', 'live', { timeout: 30_000 });
  await page.getByTestId('unknown-row').filter({ hasText: r.targets[0]! }).getByTestId('resolve-sent').click();
  const dialog = page.getByRole('dialog').filter({ hasText: 'Resolve as sent' });
  await dialog.getByLabel('Reason (required)').fill('Checking the provider log');
  // Decided meanwhile elsewhere (another tab, or a colleague on the support desk).
  await resolveUnknown(
    { db, actor: person('support') },
    { key, epoch: 1, outcome: 'not_sent', reason: 'provider shows no such message' },
  );
  await expect(dialog.getByTestId('changed-while-looking')).toBeVisible({ timeout: 30_000 });
  await expect(dialog).toBeVisible();
  await expect(dialog.getByLabel('Reason (required)')).toHaveValue('Checking the provider log');
});
