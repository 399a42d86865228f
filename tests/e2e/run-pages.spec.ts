// A run's pages at their own addresses (app/(console)/runs/[runId]/...) and the console's views read
// through TanStack Query. A missing, malformed or out-of-scope run id is answered 404 by the server
// itself, before any shell; the old /views/* addresses are gone; Back shows the last answer of a
// view at once from the query cache; sign-out leaves nothing of it behind Back.
import { randomUUID } from 'node:crypto';
import { createDb } from '@/lib/db/client.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { addGrant, removeGrant } from '@/lib/auth/grant-commands.ts';
import { expect, test } from './fixtures.ts';
import { PASSWORD } from './seed.ts';

test('a run, its plan and its replays answer at their addresses; a missing, malformed or out-of-scope run id is HTTP 404', async ({
  page,
  browser,
  signInAs,
  e2e,
}) => {
  await signInAs('auditor');
  const live = e2e.seeded.liveRunId;
  for (const [path, marker] of [
    [`/runs/${live}`, 'Plan joined with the ledger (P3)'],
    [`/runs/${live}/plan`, 'What you approve'],
    [`/runs/${live}/replay`, 'Preview (F1)'],
  ] as const) {
    const res = await page.goto(path);
    expect([path, res?.status()]).toEqual([path, 200]);
    await expect(page.getByText(marker, { exact: true })).toBeVisible();
    // The run id the route gave the page: its short form in the header or its link back.
    await expect(page.getByText(live.slice(0, 8), { exact: true }).first()).toBeVisible();
  }
  for (const path of [
    `/runs/${randomUUID()}`,
    `/runs/${randomUUID()}/plan`,
    `/runs/${randomUUID()}/replay`,
    '/runs/not-a-run-id',
    `/runs/${live.slice(0, 8)}/plan`,
    '/views/run',
    '/views/plan',
  ]) {
    const res = await page.goto(path);
    expect([path, res?.status()]).toEqual([path, 404]);
    await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  }

  // Someone holding a role on "receipts" only: the spring campaign's run is not there for them.
  const db = createDb(e2e.appUrl, 1);
  const email = `receipts-only-${randomUUID().slice(0, 8)}@example.com`;
  try {
    const a = e2e.seeded.users.admin;
    const admin = { kind: 'user' as const, id: a.id, label: a.email, role: 'admin' as const };
    const u = await insertUser(db, { email, name: 'Receipts only', role: 'auditor', password: PASSWORD }, admin);
    await addGrant({ db, actor: admin }, { userId: u.id, role: 'auditor', workflow: 'receipts', reason: 'their team' });
    const all = await db.roleGrant.findFirstOrThrow({ where: { userId: u.id, workflow: null } });
    await removeGrant({ db, actor: admin }, { grantId: all.id, reason: 'scoped to their team' });
  } finally {
    await db.$disconnect();
  }
  const context = await browser.newContext({ baseURL: e2e.baseURL });
  try {
    const theirs = await context.newPage();
    await theirs.goto('/sign-in');
    await theirs.getByLabel('Email').fill(email);
    await theirs.getByLabel('Password').fill(PASSWORD);
    await theirs.getByRole('button', { name: 'Sign in' }).click();
    await expect(theirs).toHaveURL(/\/runs/);
    expect((await theirs.goto(`/runs/${e2e.seeded.pendingRunId}`))?.status()).toBe(404);
    expect((await theirs.goto(`/runs/${e2e.seeded.pendingRunId}/plan`))?.status()).toBe(404);
    expect((await theirs.goto(`/runs/${live}`))?.status()).toBe(200);
  } finally {
    await context.close();
  }

  // Signed out, a run's page leads to sign-in and back to the run.
  await page.context().clearCookies();
  await page.goto(`/runs/${live}/plan`);
  await expect(page).toHaveURL(new RegExp(`/sign-in\\?.*callbackUrl=${encodeURIComponent(`/runs/${live}/plan`)}`));
});

test('views through the query cache: Back shows the last answer at once; after sign-out Back shows nothing of it', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('operatorA');
  await page.goto('/runs');
  const rows = page.getByTestId('run-row');
  await expect(rows.first()).toBeVisible();
  const shown = await rows.count();

  await page.getByRole('link', { name: e2e.seeded.liveRunId.slice(0, 8) }).click();
  await expect(page.getByText('Plan joined with the ledger (P3)')).toBeVisible();
  // From now on the runs view does not answer: what Back shows can only come from the cache.
  let held = 0;
  await page.route('**/api/console/views/runs*', () => {
    held++;
  });
  await page.goBack();
  await expect(page).toHaveURL(/\/runs$/);
  await expect(rows).toHaveCount(shown);
  // It is read again behind the cached answer (the request is the one held above).
  await expect.poll(() => held).toBeGreaterThan(0);
  await page.unroute('**/api/console/views/runs*');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in\?reason=signed_out/);
  await page.goBack();
  // Whatever the browser restores, the runs it showed are not there, and the page leaves for sign-in.
  await expect(rows).toHaveCount(0);
  await expect(page).toHaveURL(/\/sign-in/);
  await expect(rows).toHaveCount(0);
});
