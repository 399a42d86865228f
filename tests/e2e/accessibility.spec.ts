// Accessibility of the console in a real Chromium: axe-core finds no serious or critical violation
// on any page (or in an open dialog), and the operator's revoke journey works with the keyboard alone.
import AxeBuilder from '@axe-core/playwright';
import type { Locator, Page } from '@playwright/test';
import { CONSOLE_PAGES } from './console-pages.ts';
import { expect, test } from './fixtures.ts';
import { PASSWORD, USERS } from './seed.ts';

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

async function seriousViolations(page: Page, include?: string) {
  const builder = new AxeBuilder({ page }).withTags(WCAG);
  if (include) builder.include(include);
  const { violations } = await builder.analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help}\n  ${v.nodes.map((n) => n.target.join(' ')).join('\n  ')}`);
}

for (const p of CONSOLE_PAGES) {
  test(`axe: the ${p.name} page has no serious or critical violation`, async ({ page, signInAs, e2e }) => {
    // axe walks every node: the replay page lists hundreds of targets, slow on a loaded machine.
    test.setTimeout(180_000);
    if (p.persona) await signInAs(p.persona);
    await p.open(page, e2e);
    expect(await seriousViolations(page)).toEqual([]);
  });
}

test('axe: an open decision dialog is a labelled modal with no serious or critical violation', async ({
  page,
  signInAs,
  e2e,
}) => {
  test.setTimeout(180_000);
  await signInAs('operatorA');
  await page.goto(`/runs/${e2e.seeded.liveRunId}`);
  await page.getByRole('checkbox', { name: `Select ${e2e.seeded.doneTarget}` }).check();
  await page.getByRole('button', { name: /^Revoke 1$/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke 1 target' });
  await expect(dialog).toBeVisible();
  expect(await seriousViolations(page, 'dialog[open]')).toEqual([]);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

/** Presses Tab (or Shift+Tab) until `target` has the focus; fails after `max` presses. */
async function tabTo(page: Page, target: Locator, { back = false, max = 120 } = {}) {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`${String(target)} never received the focus after ${max} presses`);
}

/** The focused element shows a visible focus indicator (an outline drawn by :focus-visible). */
async function expectVisibleFocus(target: Locator) {
  const style = await target.evaluate((el) => {
    const s = getComputedStyle(el);
    return { focusVisible: el.matches(':focus-visible'), outline: s.outlineStyle, width: s.outlineWidth };
  });
  expect(style.focusVisible).toBe(true);
  expect(style.outline).not.toBe('none');
  expect(parseFloat(style.width)).toBeGreaterThanOrEqual(2);
}

test('keyboard only: skip link, sign in, open a run, select a target, cancel and confirm a revoke', async ({
  page,
  e2e,
}) => {
  test.setTimeout(300_000); // every key press is a round trip to a loaded machine
  const { liveRunId } = e2e.seeded;
  const target = 'jo@example.com'; // the seeded failed target: revocable (S5), used by no other journey
  await page.goto('/sign-in');
  // The first Tab lands on the skip link, which shows itself and moves the focus to the main content.
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(page.locator('#main')).toBeFocused();

  await tabTo(page, page.getByLabel('Email'));
  await page.keyboard.type(USERS.operatorA);
  await tabTo(page, page.getByLabel('Password'));
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/runs$/);

  // Open the run from the runs list, by keyboard.
  const runLink = page.locator(`a[href="/runs/${liveRunId}"]`).first();
  await tabTo(page, runLink);
  await expectVisibleFocus(runLink);
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/runs/${liveRunId}$`));

  const checkbox = page.getByRole('checkbox', { name: `Select ${target}` });
  await tabTo(page, checkbox);
  await expectVisibleFocus(checkbox);
  await page.keyboard.press('Space');
  await expect(checkbox).toBeChecked();

  // The bulk bar sits before the table: Shift+Tab walks back to its revoke button.
  const trigger = page.getByRole('button', { name: 'Revoke 1' });
  await tabTo(page, trigger, { back: true });
  await expectVisibleFocus(trigger);
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Revoke 1 target' });
  await expect(dialog).toBeVisible();
  const reason = dialog.getByLabel('Reason (required)');
  await expect(reason).toBeFocused();
  await page.keyboard.type('Mailbox does not exist');
  // The focus stays inside the open dialog: Tab from its last control comes back into it.
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
  }
  // Escape cancels: nothing is written and the focus returns to the button that opened the dialog.
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(trigger).toBeFocused();
  await expect(page.getByTestId('target-row').filter({ hasText: target })).toHaveAttribute('data-state', 'failed');

  // Open again; this time Cancel with Enter, then once more to confirm.
  await page.keyboard.press('Space');
  await expect(dialog).toBeVisible();
  await tabTo(page, dialog.getByRole('button', { name: 'Cancel' }));
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(trigger).toBeFocused();

  await page.keyboard.press('Enter');
  await expect(reason).toBeFocused();
  await page.keyboard.type('Mailbox does not exist; keep it out of every replay');
  const submit = dialog.getByRole('button', { name: 'Revoke', exact: true });
  await tabTo(page, submit);
  await expectVisibleFocus(submit);
  await page.keyboard.press('Enter');
  await expect(dialog.getByRole('status')).toContainText('1 revoked');
  const close = dialog.getByRole('button', { name: 'Close' });
  await tabTo(page, close);
  await page.keyboard.press('Enter');
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('target-row').filter({ hasText: target })).toHaveAttribute('data-state', 'revoked');
});
