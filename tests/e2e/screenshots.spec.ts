// Screenshots of the main pages for docs/CONSOLE.md. Each page is also asserted to render without
// an error. They are written to docs/screenshots when UPDATE_SCREENSHOTS=1, else to test-results.
import path from 'node:path';
import { expect, test } from './fixtures.ts';

const PAGES: {
  name: string;
  persona: 'operatorA' | 'operatorB' | 'support' | 'auditor' | 'admin';
  path: (s: { liveRunId: string; pendingRunId: string; unknownTarget: string }) => string;
  heading: RegExp;
}[] = [
  { name: 'runs', persona: 'operatorA', path: () => '/runs', heading: /^Runs$/ },
  { name: 'run-detail', persona: 'operatorA', path: (s) => `/runs/${s.liveRunId}`, heading: /^Run / },
  {
    name: 'run-never-sent',
    persona: 'operatorA',
    path: (s) => `/runs/${s.liveRunId}?view=never_sent`,
    heading: /^Run /,
  },
  {
    name: 'plan-approval',
    persona: 'operatorB',
    path: (s) => `/runs/${s.pendingRunId}/plan`,
    heading: /^Plan approval$/,
  },
  { name: 'target', persona: 'auditor', path: () => '/runs', heading: /./ },
  { name: 'support-queue', persona: 'support', path: () => '/support', heading: /^Support queue$/ },
  { name: 'approvals', persona: 'operatorA', path: () => '/approvals', heading: /^Four-eyes approvals$/ },
  { name: 'audit', persona: 'auditor', path: () => '/audit', heading: /^Audit trail$/ },
  { name: 'admin-users', persona: 'admin', path: () => '/admin/users', heading: /^Users & roles$/ },
  { name: 'admin-keys', persona: 'admin', path: () => '/admin/keys', heading: /^Runtime API keys$/ },
  { name: 'admin-tools', persona: 'admin', path: () => '/admin/tools', heading: /^Tool definitions$/ },
];

test('screenshots of the main pages (each renders for its persona)', async ({ page, signInAs, e2e }, info) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  const dir = process.env.UPDATE_SCREENSHOTS ? path.resolve('docs/screenshots') : info.outputPath('screenshots');
  for (const p of PAGES) {
    await signInAs(p.persona);
    if (p.name === 'target') {
      await page.goto(`/runs/${e2e.seeded.liveRunId}`);
      await page.getByTestId('target-row').filter({ hasText: 'gus@example.com' }).getByRole('link').first().click();
      await expect(page.getByTestId('current-state')).toBeVisible();
    } else {
      await page.goto(p.path(e2e.seeded));
      await expect(page.getByRole('heading', { level: 1 })).toHaveText(p.heading);
    }
    await page.screenshot({ path: path.join(dir, `${p.name}.png`), fullPage: p.name !== 'audit' });
  }
});
