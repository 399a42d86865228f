// Personal access tokens (docs/MANAGE.md): shown once and kept as a hash; refused once expired or
// revoked and the moment their person is disabled; a session cookie opens nothing on the management
// API; every call with a known token, answered or refused, is on the token's audit chain.
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { call, person, type Person } from './manage-support.ts';

let t: TestDatabase;
let tokens: typeof import('@/lib/auth/access-tokens.ts');

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  process.env.DATABASE_URL = t.appUrl;
  process.env.NEXTAUTH_SECRET = 'manage-tokens-test-secret';
  (await import('@/lib/env.ts')).resetEnvCache();
  tokens = await import('@/lib/auth/access-tokens.ts');
});

const uses = async (tokenId: string) =>
  (
    await t.owner<{ outcome: string; detail: { path: string; status: number }; actor_id: string }>(
      `SELECT outcome, detail, actor_id FROM audit_entry WHERE action = 'access_token.use' AND subject_id = $1 ORDER BY id`,
      [tokenId],
    )
  ).rows;

describe('Z4: personal access tokens', () => {
  it('the token is returned once and only its SHA-256 is stored; the list shows no secret; creation is audited', async () => {
    const p = await person(t.db, 'operator');
    expect(p.token).toMatch(/^elp_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    const row = await t.db.accessToken.findUniqueOrThrow({ where: { id: p.tokenId } });
    expect(row.secretHash).toBe(createHash('sha256').update(p.token).digest('hex'));
    const stored = await t.owner(`SELECT row_to_json(a)::text AS j FROM access_token a WHERE id = $1`, [p.tokenId]);
    expect(stored.rows[0]?.j).not.toContain(p.token.split('_')[2]);
    const listed = await tokens.listAccessTokens(t.db, p.id);
    expect(JSON.stringify(listed)).not.toContain(p.token.split('_')[2]);
    expect(listed[0]).toMatchObject({ id: p.tokenId, prefix: p.token.split('_')[1], revokedAt: null });
    const created = await t.owner(
      `SELECT actor_id FROM audit_entry WHERE action = 'access_token.create' AND subject_id = $1`,
      [p.tokenId],
    );
    expect(created.rows).toEqual([{ actor_id: p.id }]);
  });

  it('a token acts as its person; each use is audited with what was called and how it was answered', async () => {
    const p = await person(t.db, 'support');
    const me = await call('GET', '/me', p);
    expect(me).toMatchObject({ status: 200, body: { id: p.id, email: p.email } });
    const refused = await call('POST', '/plans/approve', p, {
      planId: randomUUID(),
      itemsHash: 'a'.repeat(64),
      seenStatus: 'submitted',
    });
    expect(refused.status).toBe(403);
    expect(await uses(p.tokenId)).toEqual([
      { outcome: 'ok', detail: { method: 'GET', path: '/manage/me', status: 200 }, actor_id: p.id },
      { outcome: 'refused', detail: { method: 'POST', path: '/manage/plans/approve', status: 403 }, actor_id: p.id },
    ]);
  });

  it('an expired token is refused with 401, and so is a revoked one; revoking twice is refused', async () => {
    const p = await person(t.db, 'operator');
    await t.db.accessToken.update({ where: { id: p.tokenId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const expired = await call('GET', '/me', p);
    expect(expired).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(expired.body.detail).toContain('expired');

    const q = await person(t.db, 'operator');
    const actor = { kind: 'user' as const, id: q.id, label: q.email, role: 'operator' as const };
    expect((await call('GET', '/me', q)).status).toBe(200);
    await tokens.revokeAccessToken({ db: t.db, actor, mayManageUsers: false }, { tokenId: q.tokenId });
    const revoked = await call('GET', '/me', q);
    expect(revoked).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(revoked.body.detail).toContain('revoked');
    await expect(
      tokens.revokeAccessToken({ db: t.db, actor, mayManageUsers: false }, { tokenId: q.tokenId }),
    ).rejects.toThrow('already revoked');
    // Someone else's token is not found for a person who may not manage users.
    const r = await person(t.db, 'operator');
    await expect(
      tokens.revokeAccessToken({ db: t.db, actor, mayManageUsers: false }, { tokenId: r.tokenId }),
    ).rejects.toThrow('no access token');
    expect((await uses(q.tokenId)).map((u) => u.detail.status)).toEqual([200, 401]);
  });

  it('A1: two revocations racing on one token revoke it once and write one audit entry', async () => {
    const p = await person(t.db, 'operator');
    const actor = { kind: 'user' as const, id: p.id, label: p.email, role: 'operator' as const };
    const revoke = () => tokens.revokeAccessToken({ db: t.db, actor, mayManageUsers: false }, { tokenId: p.tokenId });
    const results = await Promise.allSettled(Array.from({ length: 8 }, revoke));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toContain('already revoked');
    const entries = await t.db.auditEntry.count({ where: { action: 'access_token.revoke', subjectId: p.tokenId } });
    expect(entries).toBe(1);
  });

  it("a disabled person's token stops at once, and a decision with it is refused and audited", async () => {
    const admin = await person(t.db, 'admin');
    const p: Person = await person(t.db, 'operator');
    expect((await call('GET', '/me', p)).status).toBe(200);
    const disabled = await call('POST', '/users/update', admin, {
      userId: p.id,
      disabled: true,
      reason: 'left the team',
    });
    expect(disabled.status).toBe(200);
    expect(await call('GET', '/me', p)).toMatchObject({
      status: 401,
      body: { code: 'unauthenticated', reason: 'disabled' },
    });
    const refused = await call('POST', '/effects/revoke', p, { keys: ['k'], reason: 'x', seen: {} });
    expect(refused.status).toBe(401);
    const audited = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'effect.revoke' AND outcome = 'refused' AND actor_id = $1`,
      [p.id],
    );
    expect(audited.rows[0]?.n).toBe(1);
  });

  it('no token, a malformed or unknown one, or a console session cookie alone: 401, nothing answered', async () => {
    expect((await call('GET', '/me', null)).status).toBe(401);
    expect((await call('GET', '/me', { token: 'elk_abcdefabcdef_' + 'x'.repeat(43) })).status).toBe(401);
    const unknown = await call('GET', '/me', { token: 'elp_abcdefabcdef_' + 'x'.repeat(43) });
    expect(unknown).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    const { mintSessionToken } = await import('@/lib/auth/session.ts');
    const p = await person(t.db, 'admin');
    const user = await t.db.user.findUniqueOrThrow({ where: { id: p.id } });
    const { dispatchApi } = await import('@/scripts/support/api-router.ts');
    const res = await dispatchApi(
      new Request('http://ledger.test/api/v1/manage/me', {
        headers: { cookie: `next-auth.session-token=${await mintSessionToken(user)}` },
      }),
    );
    expect(res.status).toBe(401);
  });

  it('bad token input is refused naming the field', async () => {
    const p = await person(t.db, 'auditor');
    const actor = { kind: 'user' as const, id: p.id, label: p.email, role: 'auditor' as const };
    const { parseInput } = await import('@/lib/ledger/validate.ts');
    expect(() => parseInput(tokens.createAccessTokenInput, { name: '', expiresInDays: 30 })).toThrow(/name/);
    expect(() => parseInput(tokens.createAccessTokenInput, { name: 'x', expiresInDays: 1000 })).toThrow(/366/);
    const made = await tokens.createAccessToken({ db: t.db, actor }, { name: 'ci', expiresInDays: 1 });
    expect(made.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
  });
});
