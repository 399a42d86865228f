// Z4 with the per-process session memory (lib/auth/session-cache.ts): pages share a session's check for
// a second, yet a sign-out or a role change made through this process is refused at once, and a change
// made elsewhere (another instance, written straight to the database here) is refused once the
// remembered answer expires.
import { beforeAll, describe, expect, it } from 'vitest';
import { decode } from 'next-auth/jwt';
import { resetEnvCache } from '@/lib/env.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';

let t: TestDatabase;
let cache: typeof import('@/lib/auth/session-cache.ts');
let session: typeof import('@/lib/auth/session.ts');
let users: typeof import('@/lib/auth/users.ts');
let signOut: typeof import('@/lib/auth/sign-out.ts');
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.NEXTAUTH_SECRET = 'console-session-cache-test-secret';
  resetEnvCache();
  cache = await import('@/lib/auth/session-cache.ts');
  session = await import('@/lib/auth/session.ts');
  users = await import('@/lib/auth/users.ts');
  signOut = await import('@/lib/auth/sign-out.ts');
});

async function signedIn(role: 'operator' | 'admin' = 'operator') {
  const email = `cache-${suffix()}@example.com`;
  const u = await users.insertUser(t.db, { email, name: 'Cache', role, password: 'a-long-enough-password' }, system);
  const raw = await session.mintSessionToken({ id: u.id, email, sessionVersion: u.sessionVersion });
  return { id: u.id, email, raw, cookie: `next-auth.session-token=${raw}` };
}

describe('Z4: remembered sessions end when the session ends', () => {
  it('Z4: a sign-out through this process is refused on the very next page, though the session was just remembered', async () => {
    const s = await signedIn();
    expect((await cache.cachedSessionFromCookie(s.cookie, t.db)).problem).toBeNull();
    const token = await decode({ token: s.raw, secret: process.env.NEXTAUTH_SECRET! });
    expect(await signOut.endSession(t.db, token)).toEqual({ revoked: true });
    expect((await cache.cachedSessionFromCookie(s.cookie, t.db)).problem).toBe('signed_out');
  });

  it('Z4: a role change through this process is refused on the very next page', async () => {
    const s = await signedIn();
    const admin = await signedIn('admin');
    expect((await cache.cachedSessionFromCookie(s.cookie, t.db)).user?.role).toBe('operator');
    await users.updateUser(
      { db: t.db, actor: { kind: 'user', id: admin.id, label: admin.email, role: 'admin' } },
      { userId: s.id, role: 'support', reason: 'moved to support' },
    );
    expect((await cache.cachedSessionFromCookie(s.cookie, t.db)).problem).toBe('session_revoked');
  });

  it('Z4: a user disabled by another instance is refused once the remembered answer expires', async () => {
    const s = await signedIn();
    expect((await cache.cachedSessionFromCookie(s.cookie, t.db)).problem).toBeNull();
    // Another instance's change: straight to the database, this process's memory is not told.
    await t.owner('UPDATE app_user SET disabled = true, session_version = session_version + 1 WHERE id = $1', [s.id]);
    const started = Date.now();
    let problem: string | null = null;
    while (problem === null && Date.now() - started < 60_000) {
      problem = (await cache.cachedSessionFromCookie(s.cookie, t.db)).problem;
      if (problem === null) await new Promise((r) => setTimeout(r, 50)); // polling for the condition
    }
    expect(problem).toBe('disabled');
    // No caching without a session cookie: the anonymous answer is immediate.
    expect((await cache.cachedSessionFromCookie(null, t.db)).problem).toBe('no_session');
  });
});
