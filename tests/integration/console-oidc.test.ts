// Z1, Z4: who a single sign-on lets in and with which role, on real PostgreSQL: a mapped newcomer is
// created just in time, an existing person keeps their account (and gets their mapped role again when
// OIDC_SYNC_ROLES is on), an unknown or disabled person or an unverified email is refused, and every
// outcome is on the audit trail. A one-time password still to be changed is voided by a single
// sign-on (Z7). Credentials sign-in turned off: no provider, and the endpoint refuses.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { admitOidcSignIn } from '@/lib/auth/oidc-sign-in.ts';
import { parseRoleMap } from '@/lib/auth/oidc-roles.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { mintSessionToken, sessionFromCookie } from '@/lib/auth/session.ts';
import { resetEnvCache } from '@/lib/env.ts';

let t: TestDatabase;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const settings = {
  issuer: 'https://idp.example.test',
  groupsClaim: 'groups',
  roleMap: parseRoleMap('ledger-ops=operator,ledger-support=support'),
  syncRoles: true,
};
const request = { ip: '198.51.100.9', userAgent: 'vitest', requestId: null };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  // Session tokens are minted to show which sessions a voided one-time password ends.
  process.env.NEXTAUTH_SECRET = 'console-oidc-test-secret';
  resetEnvCache();
});

function claims(email: string, groups: string[], extra: Record<string, unknown> = {}) {
  return { sub: `sub-${email}`, email, email_verified: true, name: 'Noor Haddad', groups, ...extra };
}

async function trail(chainPrefix: string) {
  return t.db.auditEntry.findMany({
    where: { chain: { startsWith: chainPrefix } },
    orderBy: [{ chain: 'asc' }, { seq: 'asc' }],
  });
}

describe('Z1: single sign-on admission', () => {
  it('creates a newcomer whose group maps to a role, once, audited, with no password', async () => {
    const email = `noor-${suffix()}@example.com`;
    const first = await admitOidcSignIn(
      t.db,
      claims(email.toUpperCase(), ['marketing', 'ledger-ops']),
      settings,
      request,
    );
    expect(first).toMatchObject({ ok: true, user: { email, role: 'operator', name: 'Noor Haddad' } });
    if (!first.ok) throw new Error('refused');
    const row = await t.db.user.findUniqueOrThrow({ where: { email }, omit: { passwordHash: false } });
    expect(row).toMatchObject({ id: first.user.id, role: 'operator', passwordHash: null, disabled: false });

    const again = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings, request);
    expect(again).toMatchObject({ ok: true, user: { id: first.user.id } });
    expect(await t.db.user.count({ where: { email } })).toBe(1);
    const entries = await trail(`user:${first.user.id}`);
    expect(entries.map((e) => [e.action, e.outcome])).toEqual([
      ['user.sso_create', 'ok'],
      ['auth.sso_sign_in', 'ok'],
      ['auth.sso_sign_in', 'ok'],
    ]);
    expect(entries[0]).toMatchObject({ actorKind: 'system', actorId: 'oidc', afterState: 'operator', ip: request.ip });
    expect(entries[0]!.detail).toMatchObject({ issuer: settings.issuer, groups: ['marketing', 'ledger-ops'] });
  });

  it('refuses an unknown person (no account, no mapped group) and writes nothing but the refusal', async () => {
    const email = `stranger-${suffix()}@example.com`;
    const result = await admitOidcSignIn(t.db, claims(email, ['marketing']), settings, request);
    expect(result).toEqual({ ok: false, refusal: 'sso_unknown' });
    expect(await t.db.user.count({ where: { email } })).toBe(0);
    const entries = await trail(`refused:auth:${email}`);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'auth.sso_sign_in', outcome: 'refused', subjectId: email });
    expect(entries[0]!.detail).toMatchObject({ why: 'sso_unknown', groups: ['marketing'] });
  });

  it('refuses a disabled person even when their group maps, and leaves their role alone', async () => {
    const email = `left-${suffix()}@example.com`;
    const user = await insertUser(
      t.db,
      { email, name: 'Left', role: 'support', password: 'a-long-enough-password' },
      system,
    );
    await t.db.user.update({ where: { id: user.id }, data: { disabled: true } });
    const result = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings, request);
    expect(result).toEqual({ ok: false, refusal: 'sso_disabled' });
    expect(await t.db.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({ role: 'support' });
    const refused = await trail(`refused:auth:${email}`);
    expect(refused.map((e) => [e.action, e.subjectId])).toEqual([['auth.sso_sign_in', user.id]]);
  });

  it('refuses an email the provider did not verify, before creating anyone', async () => {
    const email = `unverified-${suffix()}@example.com`;
    for (const verified of [false, undefined, 'yes']) {
      const result = await admitOidcSignIn(t.db, claims(email, ['ledger-ops'], { email_verified: verified }), settings);
      expect(result).toEqual({ ok: false, refusal: 'sso_unverified' });
    }
    expect(await t.db.user.count({ where: { email } })).toBe(0);
    expect(await trail(`refused:auth:${email}`)).toHaveLength(3);
  });

  it('re-applies the mapped role at sign-in when sync is on, ending other sessions; keeps it when off', async () => {
    const email = `moved-${suffix()}@example.com`;
    const user = await insertUser(
      t.db,
      { email, name: 'Moved', role: 'support', password: 'a-long-enough-password' },
      system,
    );
    const off = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), { ...settings, syncRoles: false });
    expect(off).toMatchObject({
      ok: true,
      user: { id: user.id, role: 'support', sessionVersion: user.sessionVersion },
    });

    const on = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings, request);
    expect(on).toMatchObject({
      ok: true,
      user: { id: user.id, role: 'operator', sessionVersion: user.sessionVersion + 1 },
    });
    const change = (await trail(`user:${user.id}`)).filter((e) => e.action === 'user.sso_role');
    expect(change.map((e) => [e.beforeState, e.afterState, e.actorId])).toEqual([['support', 'operator', 'oidc']]);

    // No mapped group at all: the console's own role stands (an account an admin made by hand).
    const unmapped = await admitOidcSignIn(t.db, claims(email, ['marketing']), settings);
    expect(unmapped).toMatchObject({ ok: true, user: { role: 'operator', sessionVersion: user.sessionVersion + 1 } });
  });

  it('Z7: voids a one-time password still to be changed, audited, and ends the sessions it opened', async () => {
    const email = `handed-${suffix()}@example.com`;
    const oneTime = 'a-one-time-password-someone-saw';
    const user = await insertUser(t.db, { email, name: 'Handed', role: 'operator', password: oneTime }, system, {
      mustChangePassword: true,
    });
    const openedByOneTime = `next-auth.session-token=${await mintSessionToken(user)}`;

    const result = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings, request);
    expect(result).toMatchObject({ ok: true, user: { id: user.id, sessionVersion: user.sessionVersion + 1 } });
    if (!result.ok) throw new Error('refused');
    const row = await t.db.user.findUniqueOrThrow({ where: { id: user.id }, omit: { passwordHash: false } });
    expect(row).toMatchObject({ mustChangePassword: false, passwordHash: null, role: 'operator' });
    const sso = `next-auth.session-token=${await mintSessionToken({ ...user, sessionVersion: result.user.sessionVersion })}`;
    expect(await sessionFromCookie(sso, t.db)).toMatchObject({ problem: null, user: { mustChangePassword: false } });
    expect(await sessionFromCookie(openedByOneTime, t.db)).toMatchObject({ problem: 'session_revoked' });
    const entries = await trail(`user:${user.id}`);
    expect(entries.map((e) => [e.action, e.actorId])).toEqual([
      ['user.create', 'test'],
      ['user.sso_password_void', 'oidc'],
      ['auth.sso_sign_in', user.id],
    ]);
    expect(entries[1]).toMatchObject({ ip: request.ip, outcome: 'ok' });

    // Once voided, later single sign-ons change nothing more.
    const again = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings);
    expect(again).toMatchObject({ ok: true, user: { sessionVersion: user.sessionVersion + 1 } });
    expect((await trail(`user:${user.id}`)).filter((e) => e.action === 'user.sso_password_void')).toHaveLength(1);
  });

  it('Z7: leaves alone a password the person chose themselves', async () => {
    const email = `own-${suffix()}@example.com`;
    const user = await insertUser(
      t.db,
      { email, name: 'Own', role: 'operator', password: 'a-long-enough-password' },
      system,
    );
    const before = await t.db.user.findUniqueOrThrow({ where: { id: user.id }, omit: { passwordHash: false } });
    const result = await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), settings);
    expect(result).toMatchObject({ ok: true, user: { sessionVersion: user.sessionVersion } });
    const after = await t.db.user.findUniqueOrThrow({ where: { id: user.id }, omit: { passwordHash: false } });
    expect(after.passwordHash).toBe(before.passwordHash);
    expect((await trail(`user:${user.id}`)).map((e) => e.action)).toEqual(['user.create', 'auth.sso_sign_in']);
  });

  it('reads the groups from the configured claim', async () => {
    const email = `claim-${suffix()}@example.com`;
    const custom = { ...settings, groupsClaim: 'roles' };
    expect(await admitOidcSignIn(t.db, claims(email, ['ledger-ops']), custom)).toEqual({
      ok: false,
      refusal: 'sso_unknown',
    });
    const result = await admitOidcSignIn(t.db, claims(email, [], { roles: 'ledger-support' }), custom);
    expect(result).toMatchObject({ ok: true, user: { role: 'support' } });
  });

  it('creates one account when the same newcomer signs in twice at once', async () => {
    const email = `twice-${suffix()}@example.com`;
    const results = await Promise.all(
      Array.from({ length: 4 }, () => admitOidcSignIn(t.db, claims(email, ['ledger-support']), settings)),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(new Set(results.map((r) => (r.ok ? r.user.id : null))).size).toBe(1);
    expect(await t.db.user.count({ where: { email } })).toBe(1);
    const created = await t.db.auditEntry.findMany({
      where: { action: 'user.sso_create', subjectId: results[0]!.ok ? results[0]!.user.id : '' },
    });
    expect(created).toHaveLength(1);
  });
});

describe('credentials sign-in turned off (AUTH_CREDENTIALS=off)', () => {
  afterEach(() => {
    delete process.env.AUTH_CREDENTIALS;
    resetEnvCache();
  });

  it('drops the credentials provider and refuses its endpoint with problem+json', async () => {
    process.env.DATABASE_URL = t.appUrl;
    process.env.NEXTAUTH_SECRET = 'console-oidc-test-secret';
    const { authOptions } = await import('@/lib/auth/options.ts');
    const { POST } = await import('@/app/api/auth/[...nextauth]/route.ts');
    resetEnvCache();
    expect(authOptions().providers.map((p) => p.id)).toContain('credentials');

    process.env.AUTH_CREDENTIALS = 'off';
    resetEnvCache();
    expect(authOptions().providers.map((p) => p.id)).not.toContain('credentials');
    const email = `blocked-${suffix()}@example.com`;
    await insertUser(t.db, { email, name: 'Blocked', role: 'admin', password: 'a-long-enough-password' }, system);
    const body = new URLSearchParams({ email, password: 'a-long-enough-password', json: 'true' });
    const res = await POST(
      new Request('http://console.test/api/auth/callback/credentials', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      }),
      { params: Promise.resolve({ nextauth: ['callback', 'credentials'] }) },
    );
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ code: 'forbidden', detail: expect.stringContaining('turned off') });
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await t.db.auditEntry.count({ where: { action: 'auth.sign_in', chain: { contains: email } } })).toBe(0);
  });
});
