// Z1: the role a single sign-on re-applies (OIDC_SYNC_ROLES) never takes away the last all-workflows
// admin grant. The person still signs in, keeps admin, and the skipped change is on the audit trail;
// once someone else holds admin on all workflows, the next sign-on applies the mapped role.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { admitOidcSignIn } from '@/lib/auth/oidc-sign-in.ts';
import { parseRoleMap } from '@/lib/auth/oidc-roles.ts';
import { insertUser } from '@/lib/auth/users.ts';

let t: TestDatabase;
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const settings = {
  issuer: 'https://idp.example.test',
  groupsClaim: 'groups',
  roleMap: parseRoleMap('ledger-ops=operator'),
  syncRoles: true,
};
const request = { ip: '198.51.100.70', userAgent: 'vitest', requestId: null };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
});

const claims = (email: string) => ({ sub: `sub-${email}`, email, email_verified: true, groups: ['ledger-ops'] });

const allWorkflowsAdmins = () =>
  t.db.roleGrant.count({ where: { role: 'admin', workflow: null, user: { disabled: false } } });

describe('Z1: single sign-on and the last all-workflows admin', () => {
  it('Z1: a role sync that would remove the last all-workflows admin keeps admin, admits the person and audits the skip', async () => {
    const email = `last-admin-${suffix()}@example.com`;
    const admin = await insertUser(
      t.db,
      { email, name: 'Last', role: 'admin', password: 'a-long-enough-password' },
      system,
    );
    expect(await allWorkflowsAdmins()).toBe(1);

    const result = await admitOidcSignIn(t.db, claims(email), settings, request);
    expect(result).toMatchObject({
      ok: true,
      user: { id: admin.id, role: 'admin', sessionVersion: admin.sessionVersion },
    });
    expect(await t.db.user.findUniqueOrThrow({ where: { id: admin.id } })).toMatchObject({ role: 'admin' });
    expect(await allWorkflowsAdmins()).toBe(1);
    const skipped = await t.db.auditEntry.findMany({ where: { chain: `refused:user:${admin.id}` } });
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({
      action: 'user.sso_role',
      outcome: 'refused',
      actorId: 'oidc',
      beforeState: 'admin',
      afterState: 'operator',
      ip: request.ip,
    });
    expect((skipped[0]!.detail as { why: string }).why).toContain('last all-workflows admin');
    const ok = await t.db.auditEntry.findMany({ where: { chain: `user:${admin.id}` }, orderBy: { seq: 'asc' } });
    expect(ok.map((e) => e.action)).toEqual(['user.create', 'auth.sso_sign_in']);

    // Another all-workflows admin: the mapped role applies at the next sign-on.
    await insertUser(
      t.db,
      {
        email: `other-admin-${suffix()}@example.com`,
        name: 'Other',
        role: 'admin',
        password: 'a-long-enough-password',
      },
      system,
    );
    const next = await admitOidcSignIn(t.db, claims(email), settings, request);
    expect(next).toMatchObject({ ok: true, user: { role: 'operator', sessionVersion: admin.sessionVersion + 1 } });
    expect(await allWorkflowsAdmins()).toBe(1);
  });
});
