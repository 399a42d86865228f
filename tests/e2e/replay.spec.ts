// F1-F5, Z3 in the browser: operator A previews the demo's crashed campaign and requests a forced
// replay by typing the number of targets; operator B approves and starts it; the progress bar
// reaches the end (the worker process sends through the sandbox provider); the report's sent count
// equals what the sandbox delivered during the replay, and no recipient received two.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page, TestInfo } from '@playwright/test';
import { expect, test } from './fixtures.ts';

/** Like screenshots.spec.ts: into docs/screenshots with UPDATE_SCREENSHOTS=1, else test-results. */
async function shot(page: Page, info: TestInfo, name: string) {
  const dir = process.env.UPDATE_SCREENSHOTS ? path.resolve('docs/screenshots') : info.outputPath('screenshots');
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

interface Delivery {
  messageId: string;
  to: string;
  idempotencyKey: string | null;
}

async function deliveries(sandboxUrl: string): Promise<Delivery[]> {
  const res = await fetch(`${sandboxUrl}/_sandbox/deliveries`);
  expect(res.ok).toBe(true);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

test('F1/F4/Z3/F5: a forced replay requested by one operator, approved by another, runs to the end and sends each pending target once', async ({
  page,
  signInAs,
  e2e,
}, info) => {
  test.setTimeout(180_000);
  const { runId, sandboxUrl, deliveriesBefore } = e2e.replay;
  expect((await deliveries(sandboxUrl)).length).toBe(deliveriesBefore);

  // Operator A: preview (F1) from the run page.
  await signInAs('operatorA');
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('crashed');
  await page.getByTestId('force-replay').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}/replay`));
  const willSend = Number((await page.getByTestId('replay-will-send').textContent())!.replace(/,/g, ''));
  expect(willSend).toBeGreaterThan(0);
  const preview = page.getByTestId('replay-preview');
  // The preview shows a page at a time; the "Will be sent" view pages through every target it would send.
  await page.getByRole('navigation', { name: 'Filter' }).getByRole('link', { name: 'Will be sent' }).click();
  await expect(page).toHaveURL(/filter=will_send/);
  let willSendListed = 0;
  for (;;) {
    await expect(preview.locator('tr[data-will-send="no"]')).toHaveCount(0);
    willSendListed += await preview.locator('tr[data-will-send="yes"]').count();
    const next = page.getByRole('link', { name: 'Next page' });
    if ((await next.count()) === 0) break;
    const url = page.url();
    await next.click();
    await expect(page).not.toHaveURL(url);
  }
  expect(willSendListed).toBe(willSend);
  await page.goto(`/runs/${runId}/replay`);
  // Skipped targets are listed with why (F2): the demo has done, unknown and in-flight ones.
  await expect(preview.locator('tr[data-state="done"]').first()).toContainText('skipped: done');
  await expect(preview.locator('tr[data-state="unknown"]').first()).toContainText('support must resolve it');
  await shot(page, info, 'replay-preview');

  // F4: a wrong count is refused in place; the right count plus a reason creates the request (Z3).
  await page.getByTestId('replay-confirm-count').fill(String(willSend + 1));
  await page.getByTestId('replay-reason').fill('The campaign agent crashed at recipient 40');
  await page.getByTestId('replay-request').click();
  await expect(page.getByText(`type ${willSend}, the number of targets`)).toBeVisible();
  await page.getByTestId('replay-confirm-count').fill(String(willSend));
  await page.getByTestId('replay-request').click();
  const panel = page.getByTestId('replay-panel').first();
  await expect(panel).toHaveAttribute('data-status', 'awaiting_approval');
  await expect(panel).toContainText('Your request: another operator must approve it');
  await expect(panel.getByTestId('replay-approve')).toHaveCount(0);
  await expect(panel.getByTestId('replay-remaining')).toHaveText(String(willSend));

  // Operator B: finds the request on the approvals page, approves it, starts it.
  await signInAs('operatorB');
  await page.goto('/approvals');
  await page
    .getByTestId('approval-row')
    .filter({ hasText: 'The campaign agent crashed at recipient 40' })
    .getByTestId('open-replay')
    .click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}/replay`));
  await page.getByTestId('replay-panel').first().getByTestId('replay-approve').click();
  await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'approved');
  await page.getByTestId('replay-panel').first().getByTestId('replay-start').click();

  // F5: pause while it runs (the sandbox is rate limited to 8 sends/s), then resume.
  const live = page.getByTestId('replay-panel').first();
  await expect(live).toHaveAttribute('data-status', 'running');
  await expect
    .poll(async () => Number(await live.getByTestId('replay-sent').textContent()), { timeout: 30_000 })
    .toBeGreaterThan(0);
  await live.getByTestId('replay-pause').click();
  await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'paused');
  await shot(page, info, 'replay-paused');
  expect(
    Number(await page.getByTestId('replay-panel').first().getByTestId('replay-remaining').textContent()),
  ).toBeGreaterThan(0);
  await page.getByTestId('replay-panel').first().getByTestId('replay-resume').click();
  await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'running');

  // F5: the live bar reaches the end, then the report shows.
  const bar = page.getByTestId('replay-progress').first();
  await expect(bar).toHaveAttribute('aria-valuenow', String(willSend), { timeout: 120_000 });
  await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'completed', {
    timeout: 30_000,
  });
  const report = page.getByTestId('replay-report').first();
  await expect(report).toBeVisible();
  await report.locator('details').evaluate((d) => ((d as HTMLDetailsElement).open = true));
  await shot(page, info, 'replay-report');
  const sent = Number(await report.getByTestId('report-sent').textContent());
  expect(sent).toBeGreaterThan(0);

  // The report matches what the provider delivered during the replay; nobody received two.
  const all = await deliveries(sandboxUrl);
  const during = all.slice(deliveriesBefore);
  expect(during.length).toBe(sent);
  const perRecipient = new Map<string, number>();
  for (const d of all) perRecipient.set(d.to, (perRecipient.get(d.to) ?? 0) + 1);
  expect([...perRecipient.entries()].filter(([, n]) => n > 1)).toEqual([]);
  await expect(report.getByTestId('report-eo-after')).not.toHaveText(
    (await report.getByTestId('report-eo-before').textContent()) ?? '',
  );
  // The report downloads: CSV with one row per target, JSON with the same summary and every target.
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), report.getByTestId('report-csv').click()]);
  const csv = readFileSync((await csvDownload.path())!, 'utf8')
    .trim()
    .split('\r\n');
  expect(csv[0]).toBe('target,key,epoch,outcome,state_now,note');
  const csvSent = csv.slice(1).filter((l) => l.split(',')[3] === '"sent"');
  expect(csvSent.length).toBe(sent);
  const sentTargets = csvSent.map((l) => JSON.parse(l.split(',')[0]!) as string);
  expect(new Set(sentTargets.map((t) => t.trim().toLowerCase()))).toEqual(new Set(during.map((d) => d.to)));
  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), report.getByTestId('report-json').click()]);
  const json = JSON.parse(readFileSync((await jsonDownload.path())!, 'utf8')) as {
    report: { replayId: string; sent: number; total: number };
    items: { outcome: string }[];
  };
  expect(json.report.sent).toBe(sent);
  expect(json.items.length).toBe(json.report.total);
  // The page shows the report's first rows; the downloads hold every target.
  await expect(report.locator('tr[data-outcome]')).toHaveCount(Math.min(json.report.total, 50));
  expect(csv.length - 1).toBe(json.report.total);
  const bad = await page.request.get(`/api/console/replays/${json.report.replayId}/report?format=xml`);
  expect(bad.status()).toBe(422);
  expect(bad.headers()['content-type']).toContain('application/problem+json');
  // The run no longer reads as a live incident: the run page and the runs list say it was replayed.
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText(/^(recovered|replayed)$/);
  await page.goto('/runs');
  const listed = page.getByTestId('run-row').filter({ has: page.locator(`a[href="/runs/${runId}"]`) });
  await expect(listed.getByTestId('run-status')).toHaveText(/^(recovered|replayed)$/);
});

test('F5: a requested replay cancelled before approval sends nothing and its report says so', async ({
  page,
  signInAs,
  e2e,
}) => {
  const runId = e2e.seeded.liveRunId;
  const before = (await deliveries(e2e.replay.sandboxUrl)).length;
  await signInAs('operatorA');
  await page.goto(`/runs/${runId}/replay`);
  const willSend = Number((await page.getByTestId('replay-will-send').textContent())!.replace(/,/g, ''));
  expect(willSend).toBeGreaterThan(0);
  await page.getByTestId('replay-confirm-count').fill(String(willSend));
  await page.getByTestId('replay-reason').fill('Receipts of the failed order batch');
  await page.getByTestId('replay-request').click();
  const panel = page.getByTestId('replay-panel').first();
  await expect(panel).toHaveAttribute('data-status', 'awaiting_approval');
  await panel.getByTestId('replay-cancel').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Cancel replay' }).click();
  await expect(dialog.getByRole('alert')).toBeVisible(); // a reason is required
  await dialog.getByLabel('Reason (required)').fill('Wrong batch; the order system resends these itself');
  await dialog.getByRole('button', { name: 'Cancel replay' }).click();
  // The panel refreshes the page as soon as its polled status changes, which can replace the dialog
  // before its success message is read: the replay's own status is what proves the cancel.
  await expect(page.getByTestId('replay-panel').first()).toHaveAttribute('data-status', 'cancelled');
  await page.keyboard.press('Escape'); // closes the dialog if the refresh left it open
  await expect(page.getByRole('dialog')).toBeHidden();
  const report = page.getByTestId('replay-report').first();
  await expect(report.getByTestId('report-sent')).toHaveText('0');
  await expect(report.locator('tr[data-outcome="not_sent_cancelled"]')).toHaveCount(Math.min(willSend, 50));
  expect((await deliveries(e2e.replay.sandboxUrl)).length).toBe(before);
  // The request left the approvals queue with it.
  await page.goto('/approvals');
  await expect(
    page.getByTestId('approval-row').filter({ hasText: 'Receipts of the failed order batch' }),
  ).not.toHaveAttribute('data-status', 'open');
});
