// Z7: the first admin (one-time password printed at first start), anyone added with
// `npm run user:create` and anyone an admin adds in the console must choose their own password before
// anything else. Until then every server action and console route is refused (and audited); the
// change itself is audited, ends the old sessions and retires the old password.
import { beforeAll, describe, expect, it } from 'vitest';
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
let account: typeof import('@/app/actions/account.ts');

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'console-password-change-test-secret';
  resetEnvCache();
  options = (await import('@/lib/auth/options.ts')).authOptions();
  jwt = await import('next-auth/jwt');
  session = await import('@/lib/auth/session.ts');
  request = await import('@/lib/auth/request.ts');
  admin = await import('@/app/actions/admin.ts');
  account = await import('@/app/actions/account.ts');
});

/** Signs in through the credentials provider and next-auth's jwt callback; returns the cookie header. */
async function signIn(email: string, password: string): Promise<string> {
  const provider = options.providers[0] as unknown as {
    options: { authorize: (c: Record<string, string>, req: unknown) => Promise<Record<string, unknown> | null> };
  };
  const user = await provider.options.authorize(
    { email, password },
    { headers: { 'x-forwarded-for': '198.51.100.8', 'user-agent': 'vitest' } },
  );
  if (!user) throw new Error('sign-in refused');
  const token = await options.callbacks!.jwt!({
    token: { sub: String(user.id), email } as JWT,
    user: user as never,
    account: { provider: 'credentials', type: 'credentials', providerAccountId: String(user.id) },
  });
  return `next-auth.session-token=${await jwt.encode({ token, secret: options.secret!, maxAge: 3600 })}`;
}

function asCookie<T>(cookie: string, fn: () => Promise<T>): Promise<T> {
  return asConsoleRequest(request.runWithRequest, cookie, fn, '198.51.100.8');
}

async function exportAudit(cookie: string) {
  const { GET } = await import('@/app/api/console/audit/export/route.ts');
  const headers = new Headers({ host: 'console.test', cookie });
  return GET(new Request('http://console.test/api/console/audit/export?format=jsonl', { headers }), undefined as never);
}

const newKey = () => admin.createRuntimeKeyAction({ name: `k-${suffix()}`, workflows: '*' });

describe('Z7: a password someone else chose must be changed first', () => {
  it('Z7: the first admin is refused every action and route until the one-time password is changed; the change is audited', async () => {
    const { ensureFirstAdmin } = await import('@/lib/auth/bootstrap.ts');
    const first = (await ensureFirstAdmin(t.db))!;
    const row = await t.db.user.findUniqueOrThrow({ where: { email: first.email } });
    expect(row.mustChangePassword).toBe(true);
    const cookie = await signIn(first.email, first.password);

    expect((await session.sessionFromCookie(cookie, t.db)).user).toMatchObject({ mustChangePassword: true });
    const refused = await asCookie(cookie, newKey);
    expect(refused).toMatchObject({ ok: false, code: 'forbidden' });
    expect(refused.ok ? '' : refused.error).toContain('choose a new password first');
    expect(await t.db.runtimeKey.count()).toBe(0);
    const route = await exportAudit(cookie);
    expect(route.status).toBe(403);
    expect((await route.json()).detail).toContain('choose a new password first');
    const refusals = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_entry WHERE outcome = 'refused' AND actor_id = $1 AND action = 'runtime_keys.manage'`,
      [row.id],
    );
    expect(refusals.rows[0]!.n).toBe(1);

    // Bad input names the field and changes nothing.
    const change = (input: Record<string, string>) => asCookie(cookie, () => account.changePasswordAction(input));
    const good = 'my-own-long-password-2026';
    expect(await change({ currentPassword: 'wrong', newPassword: good, confirmPassword: good })).toMatchObject({
      ok: false,
      code: 'validation',
      field: 'currentPassword',
    });
    expect(
      await change({ currentPassword: first.password, newPassword: good, confirmPassword: `${good}x` }),
    ).toMatchObject({ ok: false, code: 'validation', field: 'confirmPassword' });
    expect(
      await change({ currentPassword: first.password, newPassword: 'short', confirmPassword: 'short' }),
    ).toMatchObject({ ok: false, code: 'validation', field: 'newPassword' });
    expect(
      await change({ currentPassword: first.password, newPassword: first.password, confirmPassword: first.password }),
    ).toMatchObject({ ok: false, code: 'validation', field: 'newPassword' });
    expect(await t.db.user.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
      mustChangePassword: true,
      sessionVersion: row.sessionVersion,
    });

    expect(await change({ currentPassword: first.password, newPassword: good, confirmPassword: good })).toMatchObject({
      ok: true,
    });
    expect(await t.db.user.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({ mustChangePassword: false });
    const audited = await t.owner<{ chain: string; actor_id: string; detail: { required: boolean } }>(
      `SELECT chain, actor_id, detail FROM audit_entry WHERE action = 'user.password_change' AND subject_id = $1 ORDER BY id`,
      [row.id],
    );
    expect(audited.rows).toEqual([
      // The wrong current password above was refused, and that is on the trail too (A4).
      {
        chain: `refused:user:${row.id}`,
        actor_id: row.id,
        detail: { why: 'the current password is not right' },
      },
      { chain: `user:${row.id}`, actor_id: row.id, detail: { required: true } },
    ]);

    // The old session and the old password are done with; the new password opens the console.
    expect((await session.sessionFromCookie(cookie, t.db)).problem).toBe('session_revoked');
    await expect(signIn(first.email, first.password)).rejects.toThrow('Email or password is not right.');
    const fresh = await signIn(first.email, good);
    expect(await asCookie(fresh, newKey)).toMatchObject({ ok: true });
    expect((await exportAudit(fresh)).status).toBe(200);
  });

  it('Z7: a password handed over (the user:create option) is marked for change; people added otherwise are not asked', async () => {
    const { insertUser } = await import('@/lib/auth/users.ts');
    const system = { kind: 'system' as const, id: 'test', label: 'test' };
    const base = { name: 'n', role: 'auditor' as const, password: 'a-long-enough-password' };
    const script = await insertUser(t.db, { ...base, email: `s-${suffix()}@example.com` }, system, {
      mustChangePassword: true,
    });
    const plain = await insertUser(t.db, { ...base, email: `p-${suffix()}@example.com` }, system);
    expect(script.mustChangePassword).toBe(true);
    expect(plain.mustChangePassword).toBe(false);
  });

  it('Z7: a person an admin adds in the console must replace the password the admin chose, and the entry says so', async () => {
    const { createUser } = await import('@/lib/auth/users.ts');
    const email = `added-${suffix()}@example.com`;
    const password = 'an-admin-chose-this-one';
    const actor = {
      kind: 'user' as const,
      id: crypto.randomUUID(),
      label: 'admin@example.com',
      role: 'admin' as const,
    };
    const created = await createUser({ db: t.db, actor }, { email, name: 'Added', role: 'operator', password });
    expect(await t.db.user.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      mustChangePassword: true,
    });
    const entry = await t.db.auditEntry.findFirstOrThrow({ where: { action: 'user.create', subjectId: created.id } });
    expect(entry.detail).toEqual({ email, mustChangePassword: true });
    const cookie = await signIn(email, password);
    const refused = await asCookie(cookie, newKey);
    expect(refused).toMatchObject({ ok: false, code: 'forbidden' });
    expect(refused.ok ? '' : refused.error).toContain('choose a new password first');
  });
});
