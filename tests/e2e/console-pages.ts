// Every console page a person can open, with who opens it: the accessibility and small-screen specs
// walk this list, so a page added to the console is checked once it is added here.
import type { Page } from '@playwright/test';
import type { E2EState } from './fixtures.ts';
import type { Seeded } from './seed.ts';

export type Persona = keyof Seeded['users'] | null;

export interface ConsolePage {
  name: string;
  persona: Persona;
  /** Opens the page; returns when its main heading is on screen. */
  open: (page: Page, e2e: E2EState) => Promise<void>;
}

const visit = (path: (e2e: E2EState) => string) => async (page: Page, e2e: E2EState) => {
  await page.goto(path(e2e));
  await page.getByRole('heading', { level: 1 }).first().waitFor();
};

export const CONSOLE_PAGES: ConsolePage[] = [
  { name: 'sign-in', persona: null, open: visit(() => '/sign-in') },
  { name: 'runs', persona: 'operatorA', open: visit(() => '/runs') },
  { name: 'run', persona: 'operatorA', open: visit((e) => `/runs/${e.seeded.liveRunId}`) },
  { name: 'plan', persona: 'operatorB', open: visit((e) => `/runs/${e.seeded.pendingRunId}/plan`) },
  { name: 'plans', persona: 'operatorB', open: visit(() => '/plans') },
  { name: 'replay', persona: 'operatorA', open: visit((e) => `/runs/${e.replay.runId}/replay`) },
  { name: 'support', persona: 'support', open: visit(() => '/support') },
  { name: 'approvals', persona: 'operatorA', open: visit(() => '/approvals') },
  { name: 'audit', persona: 'auditor', open: visit(() => '/audit') },
  { name: 'insights', persona: 'auditor', open: visit(() => '/insights') },
  {
    name: 'target',
    persona: 'auditor',
    open: async (page, e2e) => {
      await page.goto(`/runs/${e2e.seeded.liveRunId}?q=${encodeURIComponent(e2e.seeded.doneTarget)}`);
      await page.getByRole('link', { name: e2e.seeded.doneTarget, exact: true }).click();
      await page.getByTestId('current-state').waitFor();
    },
  },
  { name: 'admin users', persona: 'admin', open: visit(() => '/admin/users') },
  { name: 'admin keys', persona: 'admin', open: visit(() => '/admin/keys') },
  { name: 'admin tools', persona: 'admin', open: visit(() => '/admin/tools') },
  { name: 'account', persona: 'support', open: visit(() => '/account/password') },
  { name: 'not found', persona: 'auditor', open: visit(() => '/no-such-page') },
];
