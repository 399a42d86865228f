// The console on a 375 px wide phone: the navigation folds into a menu button, no page scrolls
// sideways, wide tables scroll inside their own box, and a decision dialog fits on the screen.
import { CONSOLE_PAGES } from './console-pages.ts';
import { expect, test } from './fixtures.ts';

const PHONE = { width: 375, height: 800 };

test.use({ viewport: PHONE });

for (const p of CONSOLE_PAGES) {
  test(`375 px: the ${p.name} page does not scroll sideways`, async ({ page, signInAs, e2e }) => {
    if (p.persona) await signInAs(p.persona);
    await p.open(page, e2e);
    const { width, widest } = await page.evaluate((limit) => {
      // The elements that stick out, outside any box that scrolls on its own: named when this fails.
      // (an absolutely placed element, such as a screen-reader-only label, escapes a box that is not
      // positioned, so it counts as sticking out)
      const scrollsInside = (el: Element) =>
        getComputedStyle(el).position !== 'absolute' &&
        Boolean(el.parentElement?.closest('.overflow-x-auto, .overflow-auto, .overflow-x-scroll'));
      const widest = [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > limit && !scrollsInside(el))
        .slice(-5)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)})`);
      // Text that overflows its own box (a long unbroken word) sticks out without its element doing so.
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(n);
        const parent = n.parentElement;
        if (parent && range.getBoundingClientRect().right > limit && !scrollsInside(parent))
          widest.push(`text in ${parent.tagName.toLowerCase()}.${parent.className}: ${n.textContent?.slice(0, 60)}`);
      }
      return { width: document.scrollingElement!.scrollWidth, widest: widest.slice(-8) };
    }, PHONE.width);
    expect(width, `sticking out: ${widest.join(' | ')}`).toBeLessThanOrEqual(PHONE.width);
  });
}

test('375 px: the navigation is behind a menu button that opens and closes it', async ({ page, signInAs }) => {
  await signInAs('auditor');
  await page.goto('/runs');
  const nav = page.getByRole('navigation', { name: 'Console' });
  const menu = page.getByRole('button', { name: 'Menu' });
  await expect(nav).toBeHidden();
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(nav).toBeVisible();
  await nav.getByRole('link', { name: 'Audit trail' }).click();
  await expect(page).toHaveURL(/\/audit$/);
  // Following a link closes the menu again, so the page itself is what the person sees.
  await expect(nav).toBeHidden();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Audit trail');
  // Escape closes an open menu and gives the focus back to its button.
  await menu.click();
  await expect(nav).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(nav).toBeHidden();
  await expect(menu).toBeFocused();
});

test('375 px: the run table scrolls inside its own box and a decision dialog fits', async ({ page, signInAs, e2e }) => {
  await signInAs('operatorA');
  await page.goto(`/runs/${e2e.seeded.liveRunId}`);
  const table = page.getByTestId('run-table');
  const box = table.locator('xpath=..');
  const sizes = await box.evaluate((el) => ({
    overflow: getComputedStyle(el).overflowX,
    scroll: el.scrollWidth,
    client: el.clientWidth,
  }));
  expect(sizes.overflow).toBe('auto');
  expect(sizes.scroll).toBeGreaterThan(sizes.client); // wider than the phone: it scrolls in its box
  expect(sizes.client).toBeLessThanOrEqual(PHONE.width);

  await page.getByRole('checkbox', { name: `Select ${e2e.seeded.doneTarget}` }).check();
  await page.getByRole('button', { name: 'Revoke 1' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke 1 target' });
  await expect(dialog).toBeVisible();
  const rect = (await dialog.boundingBox())!;
  expect(rect.x).toBeGreaterThanOrEqual(0);
  expect(rect.x + rect.width).toBeLessThanOrEqual(PHONE.width);
  expect(rect.y + rect.height).toBeLessThanOrEqual(PHONE.height);
  await expect(dialog.getByRole('button', { name: 'Revoke', exact: true })).toBeInViewport();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});
