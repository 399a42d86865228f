// Single sign-on in a real browser against a real OpenID Connect provider (npm oidc-provider, started
// here): "Sign in with SSO", the provider's own login and consent pages, the authorization code with
// PKCE redeemed by the console, and the person the groups map to on /runs (the map is the JSON form,
// so a group name may hold a comma). This spec runs its own
// `next start` against the shared database, configured for single sign-on only (AUTH_CREDENTIALS=off),
// so the other specs keep their email + password console.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { expect, state, test } from './fixtures.ts';
import { waitForHttp } from './global-setup.ts';
import { startOidcProvider, type TestIdentity, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { freePort } from '@/lib/db/embedded.ts';
import { createDb, type Db } from '@/lib/db/client.ts';
import { insertUser } from '@/lib/auth/users.ts';

const tag = randomUUID().slice(0, 8);
const people = {
  newcomer: {
    login: 'ada',
    email: `ada-${tag}@sso.example.com`,
    name: 'Ada Lovelace',
    groups: ['Ledger Ops, EMEA'],
  },
  existing: { login: 'kemal', email: `kemal-${tag}@sso.example.com`, name: 'Kemal', groups: ['ledger-audit'] },
  handed: { login: 'hana', email: `hana-${tag}@sso.example.com`, name: 'Hana', groups: ['ledger-audit'] },
  disabled: { login: 'dora', email: `dora-${tag}@sso.example.com`, name: 'Dora', groups: ['ledger-ops'] },
  stranger: { login: 'sam', email: `sam-${tag}@sso.example.com`, name: 'Sam', groups: ['marketing'] },
} satisfies Record<string, TestIdentity>;

let idp: TestOidcProvider;
let server: ChildProcess;
let consoleUrl: string;
let db: Db;
let existingId: string;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  const s = state() as ReturnType<typeof state> & { dataDir: string };
  db = createDb(s.appUrl, 2);
  const system = { kind: 'system' as const, id: 'test', label: 'oidc spec setup' };
  const password = 'a-long-enough-password';
  existingId = (
    await insertUser(
      db,
      { email: people.existing.email, name: people.existing.name, role: 'support', password },
      system,
    )
  ).id;
  const dora = await insertUser(
    db,
    { email: people.disabled.email, name: people.disabled.name, role: 'operator', password },
    system,
  );
  await db.user.update({ where: { id: dora.id }, data: { disabled: true } });
  // An account made with a one-time password handed over to the person, not changed yet (Z7).
  await insertUser(db, { email: people.handed.email, name: people.handed.name, role: 'auditor', password }, system, {
    mustChangePassword: true,
  });

  const port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({
    redirectUri: `${consoleUrl}/api/auth/callback/oidc`,
    accounts: Object.values(people),
  });
  server = spawn('npx', ['next', 'start', '-p', String(port), '-H', '127.0.0.1'], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: s.appUrl,
      NEXTAUTH_SECRET: s.secret,
      NEXTAUTH_URL: consoleUrl,
      LEDGER_DATA_DIR: s.dataDir,
      NEXT_TELEMETRY_DISABLED: '1',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_SCOPE: idp.scope,
      OIDC_ROLE_MAP: JSON.stringify([
        { group: 'Ledger Ops, EMEA', role: 'operator' },
        { group: 'ledger-audit', role: 'auditor' },
      ]),
      AUTH_CREDENTIALS: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  server.stderr?.on('data', (d) => process.stderr.write(d));
  server.stdout?.on('data', (d) => process.env.E2E_DEBUG && process.stdout.write(d));
  await waitForHttp(`${consoleUrl}/sign-in`, server, 180_000);
});

test.afterAll(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await idp?.stop();
  await db?.$disconnect();
});

/** From the console's sign-in page through the provider's login and consent pages. */
async function signInWithSso(page: Page, login: string) {
  await page.goto(`${consoleUrl}/sign-in`);
  await page.getByRole('button', { name: 'Sign in with SSO' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password: the test provider picks the account by login');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

test('Z1 SSO: a newcomer whose group (a name with a comma) maps to operator is created at first sign-in and lands on /runs', async ({
  page,
}) => {
  await page.goto(`${consoleUrl}/sign-in`);
  // Credentials are off on this server: no password form, single sign-on is the way in.
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Sign in with SSO' })).toBeVisible();

  await signInWithSso(page, people.newcomer.login);
  await expect(page).toHaveURL(new RegExp(`^${consoleUrl}/runs`), { timeout: 30_000 });
  await expect(page.getByTestId('current-user')).toHaveText(people.newcomer.email);
  await expect(page.getByTestId('current-role')).toHaveText('operator');
  expect(idp.tokensIssuedTo).toContain(people.newcomer.login);

  const created = await db.user.findUniqueOrThrow({ where: { email: people.newcomer.email } });
  expect(created).toMatchObject({ role: 'operator', name: people.newcomer.name });
  const trail = await db.auditEntry.findMany({ where: { chain: `user:${created.id}` }, orderBy: { seq: 'asc' } });
  expect(trail.map((e) => e.action)).toEqual(['user.sso_create', 'auth.sso_sign_in']);
});

test('Z1 SSO: an existing person keeps their account and gets the role their group maps to', async ({ page }) => {
  await signInWithSso(page, people.existing.login);
  await expect(page).toHaveURL(new RegExp(`^${consoleUrl}/runs`), { timeout: 30_000 });
  await expect(page.getByTestId('current-user')).toHaveText(people.existing.email);
  await expect(page.getByTestId('current-role')).toHaveText('auditor');
  expect(await db.user.findMany({ where: { email: people.existing.email }, select: { id: true } })).toEqual([
    { id: existingId },
  ]);
});

test('Z7 SSO: a person with a one-time password still to change lands on /runs, and that password is voided', async ({
  page,
}) => {
  await signInWithSso(page, people.handed.login);
  await expect(page).toHaveURL(new RegExp(`^${consoleUrl}/runs`), { timeout: 30_000 });
  await expect(page.getByTestId('current-user')).toHaveText(people.handed.email);
  await page.goto(`${consoleUrl}/audit`);
  await expect(page).toHaveURL(new RegExp(`^${consoleUrl}/audit`));

  const row = await db.user.findUniqueOrThrow({ where: { email: people.handed.email }, omit: { passwordHash: false } });
  expect(row).toMatchObject({ mustChangePassword: false, passwordHash: null });
  const trail = await db.auditEntry.findMany({ where: { chain: `user:${row.id}` }, orderBy: { seq: 'asc' } });
  expect(trail.map((e) => e.action)).toEqual(['user.create', 'user.sso_password_void', 'auth.sso_sign_in']);
});

for (const [who, refusal, message] of [
  ['stranger', 'sso_unknown', 'There is no console account for you'],
  ['disabled', 'sso_disabled', 'This account is disabled. Ask an admin.'],
] as const) {
  test(`Z1 SSO: a ${who} person is refused with a message on the sign-in page, and audited`, async ({ page }) => {
    const person = people[who];
    await signInWithSso(page, person.login);
    await expect(page).toHaveURL(new RegExp(`/sign-in\\?error=${refusal}`), { timeout: 30_000 });
    await expect(page.getByRole('status')).toContainText(message);
    await page.goto(`${consoleUrl}/runs`);
    await expect(page).toHaveURL(/\/sign-in/);
    const refused = await db.auditEntry.findMany({
      where: { chain: `refused:auth:${person.email}`, action: 'auth.sso_sign_in' },
    });
    expect(refused.map((e) => (e.detail as { why?: string }).why)).toEqual([refusal]);
  });
}

test('AUTH_CREDENTIALS=off: the credentials endpoint refuses a right password with problem+json', async ({
  request,
}) => {
  const csrf = (await (await request.get(`${consoleUrl}/api/auth/csrf`)).json()) as { csrfToken: string };
  const res = await request.post(`${consoleUrl}/api/auth/callback/credentials`, {
    form: { email: people.existing.email, password: 'a-long-enough-password', csrfToken: csrf.csrfToken, json: 'true' },
    maxRedirects: 0,
  });
  expect(res.status()).toBe(403);
  expect(res.headers()['content-type']).toContain('application/problem+json');
  expect(await res.json()).toMatchObject({ code: 'forbidden', detail: expect.stringContaining('turned off') });
  expect(res.headers()['set-cookie'] ?? '').not.toContain('session-token');
});
