// A console page costs the server the page a person opened, not the pages its links lead to. Next's
// links prefetch every route they point at once they are on screen or hovered; every console route
// is rendered per request, so each of those prefetches ran the whole request path (the session, the
// router, 4 to 6 ms of server CPU) to learn what a click would fetch again anyway. A view of /runs
// made 18 of them, several times the cost of the page itself. Console links never prefetch
// (components/ui/link.tsx); a click still navigates on the client.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';

function prefetchesOf(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', (r) => {
    if (r.headers()['next-router-prefetch']) seen.push(new URL(r.url()).pathname);
  });
  return seen;
}

test('console links do not prefetch: hovering every navigation link and a row link asks the server for nothing until the click', async ({
  page,
  signInAs,
  e2e,
}) => {
  await signInAs('operatorA');
  const prefetches = prefetchesOf(page);
  await page.goto(`/runs/${e2e.seeded.liveRunId}`);
  await page.getByRole('heading', { level: 1 }).first().waitFor();

  // Hovering a link is when a prefetching link asks at the latest, and every link of the navigation
  // and the first target row is on screen from the start.
  const nav = page.getByRole('navigation', { name: 'Console' });
  for (const link of await nav.getByRole('link').all()) await link.hover();
  const rowLink = page.getByTestId('target-row').first().getByRole('link');
  await rowLink.hover();

  // The click is a client-side navigation (one request for the page's payload), not a reload.
  const navigation = page.waitForRequest((r) => Boolean(r.headers()['rsc']) && !r.headers()['next-router-prefetch']);
  await rowLink.click();
  await navigation;
  await page.getByTestId('current-state').waitFor();
  expect(prefetches).toEqual([]);

  // Back on a list, the audit trail's links (subjects, runs) behave the same.
  await nav.getByRole('link', { name: 'Audit trail' }).click();
  await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
  for (const link of (await page.locator('main').getByRole('link').all()).slice(0, 5)) await link.hover();
  await nav.getByRole('link', { name: 'Runs' }).click();
  await page.getByRole('heading', { name: 'Runs', level: 1 }).waitFor();
  expect(prefetches).toEqual([]);
});
