// Z4: a sign-out ends the session on the server. A sign-in goes through the real credentials provider
// and next-auth's own jwt callback and token encoding; the sign-out through next-auth's signOut
// event. A copy of the cookie taken before the sign-out is refused afterwards by the console's
// route handlers and server actions, while another sign-in of the same person keeps working.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuthOptions } from 'next-auth';
import type { JWT } from 'next-auth/jwt';
import { asConsoleRequest } from '../helpers/console-request.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { resetEnvCache } from '@/lib/env.ts';

let t: TestDatabase;
let options: AuthOptions;
let jwt: typeof import('next-auth/jwt');
let session: typeof import('@/lib/auth/session.ts');
let request: typeof import('@/lib/auth/request.ts');
let admin: typeof import('@/app/actions/admin.ts');
let insertUser: typeof import('@/lib/auth/users.ts').insertUser;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const PASSWORD = 'a-long-enough-password';

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-sign-out-test-secret';
  resetEnvCache();
  options = (await import('@/lib/auth/options.ts')).authOptions();
  jwt = await import('next-auth/jwt');
  session = await import('@/lib/auth/session.ts');
  request = await import('@/lib/auth/request.ts');
  admin = await import('@/app/actions/admin.ts');
  insertUser = (await import('@/lib/auth/users.ts')).insertUser;
});

/** Signs in through the credentials provider and next-auth's jwt callback; returns the cookie header. */
async function signIn(email: string): Promise<string> {
  const provider = options.providers[0] as unknown as {
    options: { authorize: (c: Record<string, string>, req: unknown) => Promise<Record<string, unknown> | null> };
  };
  const user = await provider.options.authorize(
    { email, password: PASSWORD },
    { headers: { 'x-forwarded-for': '198.51.100.7', 'user-agent': 'vitest' } },
  );
  if (!user) throw new Error('sign-in refused');
  const token = await options.callbacks!.jwt!({
    token: { sub: String(user.id), email } as JWT,
    user: user as never,
    account: { provider: 'credentials', type: 'credentials', providerAccountId: String(user.id) },
  });
  const raw = await jwt.encode({ token, secret: options.secret!, maxAge: session.SESSION_MAX_AGE });
  return `next-auth.session-token=${raw}`;
}

async function signOut(cookie: string) {
  const raw = cookie.slice(cookie.indexOf('=') + 1);
  const token = await jwt.decode({ token: raw, secret: options.secret! });
  await options.events!.signOut!({ token: token as JWT, session: undefined as never });
}

async function exportAudit(cookie: string) {
  const { GET } = await import('@/app/api/console/audit/export/route.ts');
  const headers = new Headers({ host: 'console.test', cookie });
  return GET(new Request('http://console.test/api/console/audit/export?format=jsonl', { headers }), undefined as never);
}

function asCookie<T>(cookie: string, fn: () => Promise<T>): Promise<T> {
  return asConsoleRequest(request.runWithRequest, cookie, fn, '198.51.100.7');
}

describe('Z4: sign-out ends the session on the server', () => {
  it('Z4: a cookie copied before sign-out is refused afterwards (route 401, action unauthenticated), audited once', async () => {
    const email = `admin-${suffix()}@example.com`;
    const user = await insertUser(t.db, { email, name: 'Ada', role: 'admin', password: PASSWORD }, system);
    const copied = await signIn(email);
    const other = await signIn(email);
    expect((await session.sessionFromCookie(copied, t.db)).problem).toBeNull();
    expect((await exportAudit(copied)).status).toBe(200);

    await signOut(copied);
    await signOut(copied); // a second sign-out of the same session writes nothing more

    expect(await session.sessionFromCookie(copied, t.db)).toMatchObject({
      problem: 'signed_out',
      user: { id: user.id },
    });
    const refused = await exportAudit(copied);
    expect(refused.status).toBe(401);
    expect((await refused.json()).detail).toContain('signed out');
    const action = await asCookie(copied, () =>
      admin.createRuntimeKeyAction({ name: `k-${suffix()}`, workflows: 'welcome-campaign' }),
    );
    expect(action).toMatchObject({ ok: false, code: 'unauthenticated' });
    expect(await t.db.runtimeKey.count()).toBe(0);

    // Only the signed-out session ends: the same person's other sign-in still works.
    expect((await session.sessionFromCookie(other, t.db)).problem).toBeNull();
    expect((await exportAudit(other)).status).toBe(200);

    const entries = await t.owner<{ chain: string; actor_id: string; detail: { sessionId: string } }>(
      `SELECT chain, actor_id, detail FROM audit_entry WHERE action = 'auth.sign_out' AND subject_id = $1`,
      [user.id],
    );
    expect(entries.rows).toHaveLength(1);
    expect(entries.rows[0]).toMatchObject({ chain: `user:${user.id}`, actor_id: user.id });
    const revoked = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM session_revocation WHERE user_id = $1 AND session_id = $2`,
      [user.id, entries.rows[0]!.detail.sessionId],
    );
    expect(revoked.rows[0]!.n).toBe(1);
  });

  it('Z4: a token without a session id is not accepted (it could never be signed out)', async () => {
    const email = `old-${suffix()}@example.com`;
    const user = await insertUser(t.db, { email, name: 'Old', role: 'auditor', password: PASSWORD }, system);
    const raw = await jwt.encode({
      token: { sub: user.id, uid: user.id, sv: user.sessionVersion, email },
      secret: options.secret!,
      maxAge: 3600,
    });
    expect((await session.sessionFromCookie(`next-auth.session-token=${raw}`, t.db)).problem).toBe('no_session');
    expect((await exportAudit(`next-auth.session-token=${raw}`)).status).toBe(401);
  });

  it('Z4: a session cookie that is not even percent-encoding is no session (401), not an error', async () => {
    for (const value of ['%', '%E0%A4%A', 'abc%zz'])
      expect((await exportAudit(`next-auth.session-token=${value}`)).status, value).toBe(401);
  });

  it('Z4: a copy kept fresh by re-encoding stays refused after the sign-out past every expiry; no sign-in lives past the absolute maximum', async () => {
    const H = 60 * 60 * 1000;
    // next-auth re-encodes a token it reads (GET /api/auth/session) with a fresh 12-hour expiry.
    const refresh = async (cookie: string) => {
      const token = await jwt.decode({ token: cookie.slice(cookie.indexOf('=') + 1), secret: options.secret! });
      if (!token) throw new Error('the copy no longer decodes');
      const raw = await jwt.encode({ token, secret: options.secret!, maxAge: session.SESSION_MAX_AGE });
      return `next-auth.session-token=${raw}`;
    };
    const person = async (name: string) => {
      const email = `${name}-${suffix()}@example.com`;
      await insertUser(t.db, { email, name, role: 'admin', password: PASSWORD }, system);
      return email;
    };
    const victim = await person('victim');
    const bystander = await person('bystander');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      const signedIn = await signIn(victim);
      vi.setSystemTime(start + 11 * H);
      const copy = await refresh(signedIn); // now valid until start + 23 h
      await signOut(signedIn);
      // Past the signed-out token's own expiry, another person's sign-out prunes what it may.
      vi.setSystemTime(start + 13 * H);
      await signOut(await signIn(bystander));
      expect((await session.sessionFromCookie(copy, t.db)).problem).toBe('signed_out');
      expect((await exportAudit(copy)).status).toBe(401);

      // A sign-in never signed out, refreshed every 11 hours, ends at the absolute maximum.
      let kept = await signIn(victim);
      const max = session.SESSION_ABSOLUTE_MAX * 1000;
      for (let at = 11 * H; at < max - H; at += 11 * H) {
        vi.setSystemTime(start + 13 * H + at);
        kept = await refresh(kept);
      }
      vi.setSystemTime(start + 13 * H + max - H);
      expect((await session.sessionFromCookie(kept, t.db)).problem).toBeNull();
      vi.setSystemTime(start + 13 * H + max + 1000);
      expect((await session.sessionFromCookie(kept, t.db)).problem).toBe('no_session');
    } finally {
      vi.useRealTimers();
    }
  });

  it("Z4: a disabled person's live session is refused on the very next request, route and action alike", async () => {
    const email = `gone-${suffix()}@example.com`;
    const gone = await insertUser(t.db, { email, name: 'Gone', role: 'admin', password: PASSWORD }, system);
    const adminEmail = `boss-${suffix()}@example.com`;
    await insertUser(t.db, { email: adminEmail, name: 'Boss', role: 'admin', password: PASSWORD }, system);
    const cookie = await signIn(email);
    expect((await exportAudit(cookie)).status).toBe(200);
    const boss = await signIn(adminEmail);
    const disabled = await asCookie(boss, () =>
      admin.updateUserAction({ userId: gone.id, disabled: true, reason: 'left the company' }),
    );
    expect(disabled).toMatchObject({ ok: true });
    expect((await exportAudit(cookie)).status).toBe(401);
    expect(
      await asCookie(cookie, () => admin.createRuntimeKeyAction({ name: `k-${suffix()}`, workflows: 'a' })),
    ).toMatchObject({ ok: false, code: 'unauthenticated' });
  });
});
