// Sign-in fixture: a real next-auth session cookie minted with the server's secret (the same
// token the credentials flow issues), so journeys skip the form; one test uses the form itself.
import { test as base, type Page } from '@playwright/test';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { encode } from 'next-auth/jwt';
import { STATE_FILE } from './global-setup.ts';
import type { Seeded } from './seed.ts';

export interface E2EState {
  baseURL: string;
  secret: string;
  appUrl: string;
  ownerUrl: string;
  seeded: Seeded;
  /** The demo's crashed campaign (provider 'sandbox') for the forced-replay journey. */
  replay: { runId: string; sandboxUrl: string; deliveriesBefore: number };
}

export function state(): E2EState {
  return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as E2EState;
}

type Persona = keyof Seeded['users'];

export const test = base.extend<{ signInAs: (persona: Persona, page?: Page) => Promise<void>; e2e: E2EState }>({
  e2e: async ({}, use) => {
    await use(state());
  },
  signInAs: async ({ context }, use) => {
    const s = state();
    await use(async (persona) => {
      const user = s.seeded.users[persona];
      const token = await encode({
        token: {
          sub: user.id,
          uid: user.id,
          sv: user.sessionVersion,
          sid: randomUUID(),
          sat: Math.floor(Date.now() / 1000),
          email: user.email,
        },
        secret: s.secret,
        maxAge: 3600,
      });
      // Replaces the session cookie in one step: a page reading its view meanwhile never goes out
      // without a session (a 401 would send it to sign in, racing the test's next navigation).
      await context.addCookies([
        { name: 'next-auth.session-token', value: token, url: s.baseURL, httpOnly: true, sameSite: 'Lax' },
      ]);
    });
  },
});

export { expect } from '@playwright/test';
