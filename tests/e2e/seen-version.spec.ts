// Z8 with two people in two browsers: support resolves an unknown target while an operator has the
// revoke dialog open on it. The operator's revoke is refused with what changed, by whom and when,
// nothing is written, the page behind shows the new state, and one click decides again on it.
import { randomUUID } from 'node:crypto';
import { expect as baseExpect, test } from './fixtures.ts';
import { PASSWORD, USERS } from './seed.ts';

// The machine may be loaded: wait for conditions, generously.
const expect = baseExpect.configure({ timeout: 60_000 });

/** A fresh unknown effect of its own, so no other journey moves it. */
async function unknownTarget(appUrl: string) {
  const { createDb } = await import('@/lib/db/client.ts');
  const ledger = await import('@/lib/ledger/index.ts');
  const db = createDb(appUrl, 1);
  const runtime = { kind: 'runtime' as const, id: 'demo-runtime', label: 'campaign-runner', workflows: ['*'] };
  try {
    const run = await ledger.createRun(
      { db, actor: runtime },
      { workflow: 'receipts', triggerId: `evt_z8_${randomUUID().slice(0, 8)}` },
    );
    const claim = await ledger.claimEffect(
      { db, actor: runtime },
      { runId: run.runId, tool: 'send_email', action: 'receipt', recordId: 'order_z8', target: 'zoe@example.com' },
    );
    if (!claim.claimed) throw new Error('the fresh key was not claimable');
    await ledger.markUnknown({ db, actor: runtime }, { key: claim.key, evidence: { error: 'timeout after send' } });
    return claim.key;
  } finally {
    await db.$disconnect();
  }
}

test('Z8: operator A revokes a target support B resolved while A had the dialog open: refused with the facts, then decided again on the new version', async ({
  page,
  browser,
  signInAs,
  e2e,
}) => {
  test.setTimeout(480_000);
  const key = await unknownTarget(e2e.appUrl);
  const targetUrl = `/target?key=${encodeURIComponent(key)}`;

  // A, an operator, opens the revoke dialog on the unknown target and writes a reason.
  await signInAs('operatorA');
  await page.goto(targetUrl);
  await expect(page.getByTestId('current-state')).toContainText('Unknown');
  await page.getByTestId('revoke').click();
  const revoke = page.getByRole('dialog').filter({ hasText: 'Revoke this key' });
  await revoke.getByLabel('Reason (required)').fill('Customer asked us not to send it');

  // Meanwhile B, support, signs in in another browser and resolves the same target as sent.
  const other = await browser.newContext({ baseURL: e2e.baseURL });
  try {
    const theirs = await other.newPage();
    await theirs.goto('/sign-in');
    await theirs.getByLabel('Email').fill(USERS.support);
    await theirs.getByLabel('Password').fill(PASSWORD);
    await theirs.getByRole('button', { name: 'Sign in' }).click();
    await expect(theirs).toHaveURL(/\/support/);
    await theirs.goto(targetUrl);
    await theirs.getByTestId('resolve-sent').click();
    const resolve = theirs.getByRole('dialog').filter({ hasText: 'Resolve as sent' });
    await resolve.getByLabel('Receipt or evidence reference (required)').fill('msg_z8_provider_log');
    await resolve.getByLabel('Reason (required)').fill('Provider log shows it delivered');
    await resolve.getByRole('button', { name: 'Mark as sent' }).click();
    await expect(resolve.getByRole('status')).toContainText('Resolved as sent.');
  } finally {
    await other.close();
  }

  // A confirms the revoke of what they saw: refused, with what changed, by whom and when.
  await revoke.getByRole('button', { name: 'Revoke' }).click();
  const notice = revoke.getByTestId('stale-notice');
  await expect(notice).toContainText('This target changed while you were looking: it is now Done (was Unknown)');
  await expect(notice).toContainText(`by ${USERS.support} at`);
  await expect(notice).toContainText('Nothing was changed.');
  await expect(revoke.getByRole('status')).toHaveCount(0);
  // The page behind shows the fresh state, and the audit trail holds no revoke.
  await expect(page.getByTestId('current-state')).toContainText('Done');
  await expect(page.locator('li', { hasText: 'effect.revoke' })).toHaveCount(0);

  // One click re-opens the decision on the new version; the reason typed is kept.
  await notice.getByTestId('decide-again').click();
  await expect(revoke.getByLabel('Reason (required)')).toHaveValue('Customer asked us not to send it');
  await revoke.getByRole('button', { name: 'Revoke' }).click();
  await expect(revoke.getByRole('status')).toContainText('Revoked');
  await expect(page.getByTestId('current-state')).toContainText('Revoked');
});
