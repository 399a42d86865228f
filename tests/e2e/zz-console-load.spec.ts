// Named zz- so it runs last: its ten concurrent sign-ins must not count against the sign-in rate limit the
// journeys meet (a CI rehearsal saw every later journey held at the sign-in page).
// Issue 6 (Load), reduced: the console under load. 10 sessions, each signed in through next-auth's
// credentials flow over HTTP (CSRF token, POST /api/auth/callback/credentials) in its own
// Playwright request context, browse the e2e server's seeded runs at the same time: runs list, run
// pages, state filters, the never-sent view, the audit trail. Every response must be a correctly
// served page (200 with its marker; a redirect to /sign-in or an error boundary fails), and
// anonymous probes of the same pages must be sent to /sign-in. The full-scale version (50 sessions
// on a 1,000,000-item run during a forced replay) is scripts/proof/parts/load.ts; both use
// scripts/proof/support/load-browse.ts.
//
// No replay runs here: the forced-replay journey (replay.spec.ts) counts the shared sandbox's
// deliveries from the global setup on, so a replay in this file would break it.
import type { APIRequestContext } from '@playwright/test';
import { browse, describeBrowse, type PageKind, type Session } from '@/scripts/proof/support/load-browse.ts';
import { expect, test } from './fixtures.ts';
import { PASSWORD } from './seed.ts';

const OTHER_STATES = (keep: string) =>
  ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck', 'none']
    .filter((s) => s !== keep)
    .map((s) => (s === 'none' ? '"state":null,"changedBy"' : `"state":"${s}","changedBy"`));

function sessionOf(label: string, ctx: APIRequestContext): Session {
  return {
    label,
    async get(path) {
      const res = await ctx.get(path, { maxRedirects: 0, timeout: 60_000, failOnStatusCode: false });
      return { status: res.status(), location: res.headers()['location'] ?? null, body: await res.text() };
    },
  };
}

test('Z2/Z4/P3: 10 concurrent sessions signed in over HTTP browse the console with zero error responses; anonymous requests are sent to sign in', async ({
  playwright,
  e2e,
}) => {
  test.setTimeout(180_000);
  const { users, liveRunId, pendingRunId, doneTarget } = e2e.seeded;
  const personas = ['admin', 'operatorA', 'operatorB', 'support', 'auditor'] as const;
  const contexts: APIRequestContext[] = [];
  try {
    const sessions: Session[] = [];
    for (let i = 0; i < 10; i++) {
      const user = users[personas[i % personas.length]!];
      const ctx = await playwright.request.newContext({ baseURL: e2e.baseURL });
      contexts.push(ctx);
      const csrf = await ctx.get('/api/auth/csrf');
      expect(csrf.status()).toBe(200);
      const { csrfToken } = (await csrf.json()) as { csrfToken: string };
      const signIn = await ctx.post('/api/auth/callback/credentials', {
        form: { csrfToken, email: user.email, password: PASSWORD, callbackUrl: '/runs', json: 'true' },
        maxRedirects: 0,
        failOnStatusCode: false,
      });
      expect(signIn.status(), `sign-in of ${user.email}`).toBeLessThan(400);
      const cookies = (await ctx.storageState()).cookies.map((c) => c.name);
      expect(cookies, `session cookie for ${user.email}`).toContain('next-auth.session-token');
      sessions.push(sessionOf(`${user.email} #${i}`, ctx));
    }
    const anonymousCtx = await playwright.request.newContext({ baseURL: e2e.baseURL });
    contexts.push(anonymousCtx);

    // Shells over JSON views (components/views/): the markers are facts of the view's answer.
    const table = '"claimed":';
    const states = ['done', 'unknown', 'failed'];
    const pages: PageKind[] = [
      { kind: 'runs list', shell: true, path: () => '/runs', markers: () => ['"shownStatus"', `"id":"${liveRunId}"`] },
      {
        kind: 'run page',
        shell: true,
        path: () => `/runs/${liveRunId}`,
        markers: () => [table, '"rows":[{', JSON.stringify(doneTarget)],
      },
      { kind: 'run page (plan submitted)', shell: true, path: () => `/runs/${pendingRunId}`, markers: () => [table] },
      // The journeys may move a target to another state, so a filter asserts only what it excludes.
      {
        kind: 'state filter',
        shell: true,
        path: (i) => `/runs/${liveRunId}?state=${states[i % states.length]}`,
        markers: () => [table],
        forbidden: (i) => OTHER_STATES(states[i % states.length]!),
      },
      {
        kind: 'never-sent view',
        shell: true,
        path: () => `/runs/${liveRunId}?view=never_sent`,
        markers: () => [table],
      },
      { kind: 'audit trail', shell: true, path: () => '/audit', markers: () => ['"chain":{'] },
    ];
    const stats = await browse({
      sessions,
      pages,
      rounds: 12,
      anonymous: sessionOf('anonymous', anonymousCtx),
      anonymousEvery: 3,
    });
    test.info().annotations.push({ type: 'console load', description: describeBrowse(stats) });
    expect(stats.requests).toBe(120);
    expect(stats.failures).toEqual([]);
    expect(stats.served).toBe(120);
    expect(stats.anonymousProbes).toBe(40);
    expect(stats.anonymousServed).toBe(0);
  } finally {
    for (const ctx of contexts) await ctx.dispose();
  }
});
