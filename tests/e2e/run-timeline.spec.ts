// A run's timeline page (/runs/<id>/timeline): reached from the run page, its events in time order in
// a TanStack table, the kind and target filter in the address (a link shows the same), the next page
// by the view's cursor without repeating a row, and the run's 404 before any shell.
import { randomUUID } from 'node:crypto';
import { createDb } from '@/lib/db/client.ts';
import { claimEffect } from '@/lib/ledger/commands/claim-effect.ts';
import { completeEffect } from '@/lib/ledger/commands/complete-effect.ts';
import { createRun } from '@/lib/ledger/commands/create-run.ts';
import { expect, test } from './fixtures.ts';

const system = { kind: 'system' as const, id: 'e2e', label: 'timeline spec' };
const runtime = { kind: 'runtime' as const, id: 'timeline-runtime', label: 'timeline-runner', workflows: ['*'] };

test('a run’s timeline: linked from the run, filtered by kind and target in its address, paged by its cursor', async ({
  page,
  signInAs,
  e2e,
}) => {
  // A run of its own: 15 claims (each with its provider call), then the first of them done: 31 events.
  const tag = randomUUID().slice(0, 8);
  const db = createDb(e2e.appUrl, 1);
  let runId: string;
  try {
    runId = (await createRun({ db, actor: system }, { workflow: 'timeline-e2e', triggerId: `evt_tl_${tag}` })).runId;
    let first = '';
    for (let i = 0; i < 15; i++) {
      const c = await claimEffect(
        { db, actor: runtime },
        { runId, tool: 'send_email', action: 'receipt', recordId: `tl_${i}`, target: `tl${i}-${tag}@example.com` },
      );
      if (i === 0 && c.claimed) first = c.key;
    }
    // The first target is sent last of all: its change to done is the newest event.
    await completeEffect({ db, actor: runtime }, { key: first, receipt: `msg_tl_${tag}` });
  } finally {
    await db.$disconnect();
  }

  await signInAs('auditor');
  await page.goto(`/runs/${runId}`);
  await page.getByTestId('run-timeline-link').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runId}/timeline$`));
  const rows = page.getByTestId('timeline-row');
  await expect(rows).toHaveCount(25);
  // Newest first: the change to done is the last thing that happened.
  await expect(rows.first()).toHaveAttribute('data-kind', 'transition');
  await expect(rows.first()).toContainText('pending → done');
  await expect(rows.first()).toContainText('timeline-runner');
  await expect(rows.first()).toContainText(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  const firstPage = await rows.allTextContents();

  await page.getByRole('button', { name: 'Next page' }).click();
  await expect(page).toHaveURL(/cursor=/);
  await expect(rows).toHaveCount(6);
  const secondPage = await rows.allTextContents();
  expect(secondPage.filter((r) => firstPage.includes(r))).toEqual([]);
  await expect(page.getByRole('button', { name: 'Next page' })).toHaveCount(0);

  // Claims of one target, typed in capitals, through the form.
  const filter = page.getByRole('search', { name: 'Filter the timeline' });
  for (const kind of ['Provider call', 'Provider answer', 'State change', 'Decision', 'Replay'])
    await filter.getByLabel(kind).uncheck();
  await filter.getByLabel('Target').fill(`TL0-${tag}@EXAMPLE.COM`);
  await filter.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/kind=claim/);
  await expect(page).not.toHaveURL(/cursor=/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute('data-kind', 'claim');
  await expect(rows.first()).toContainText(`tl0-${tag}@example.com`);

  // The address is the filter: opened afresh, it shows the same.
  const shared = page.url();
  await page.goto('/runs');
  await page.goto(shared);
  await expect(rows).toHaveCount(1);
  await expect(page.getByRole('search', { name: 'Filter the timeline' }).getByLabel('Claim')).toBeChecked();
  await expect(page.getByRole('search', { name: 'Filter the timeline' }).getByLabel('Provider call')).not.toBeChecked();

  await page.goto(`/runs/${runId}/timeline?kind=attempt,transition&order=oldest`);
  await expect(rows).toHaveCount(16);
  await expect(rows.last()).toHaveAttribute('data-kind', 'transition');

  // A kind the timeline does not have: the page says which, rather than showing every kind.
  await page.goto(`/runs/${runId}/timeline?kind=sms`);
  await expect(
    page.getByText('kind: "sms" is not one of claim, attempt, answer, transition, decision, replay'),
  ).toBeVisible();

  const missing = await page.goto(`/runs/${randomUUID()}/timeline`);
  expect(missing?.status()).toBe(404);
});
