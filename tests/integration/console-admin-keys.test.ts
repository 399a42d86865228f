// Z6 (admin side): a runtime key scoped to a workflow that has never run is refused with a message
// naming it (a typo would leave the key useless), unless the admin says the workflow is new.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, suffix } from '../helpers/factories.ts';
import { createRuntimeKey, revokeRuntimeKey } from '@/lib/auth/admin-commands.ts';
import { createUser } from '@/lib/auth/users.ts';
import { LedgerError } from '@/lib/core/errors.ts';

let t: TestDatabase;
const ctx = () => ({
  db: t.db,
  actor: { kind: 'user' as const, id: randomUUID(), label: 'admin', role: 'admin' as const },
});

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
});

describe('people added by two admins at once', () => {
  it('Z1: the same email added four times at the same moment: one person, three 409s naming the email', async () => {
    const email = `same-${suffix()}@example.com`;
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        createUser(ctx(), { email, name: 'Same', role: 'auditor', password: 'a-long-enough-password' }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect(r.reason).toMatchObject({ code: 'conflict', details: { field: 'email' } });
    expect(await t.db.user.count({ where: { email } })).toBe(1);
  });
});

describe('runtime keys scoped to workflows', () => {
  it('Z6: a workflow without runs is refused with its name and nothing is written; a known, new-ticked or * scope is accepted', async () => {
    const known = `wf_${suffix()}`;
    await makeRun(t.db, known);
    const typo = `${known}x`;
    const error = await createRuntimeKey(ctx(), { name: 'k1', workflows: `${known}, ${typo}` }).catch((e) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect(error).toMatchObject({ code: 'validation', details: { field: 'workflows', unknownWorkflows: [typo] } });
    expect((error as Error).message).toContain(`"${typo}"`);
    expect(await t.db.runtimeKey.count()).toBe(0);
    const audited = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'runtime_key.create'`,
    );
    expect(audited.rows[0]!.n).toBe(0);

    expect(await createRuntimeKey(ctx(), { name: 'k2', workflows: known })).toMatchObject({ name: 'k2' });
    expect(await createRuntimeKey(ctx(), { name: 'k3', workflows: '*' })).toMatchObject({ name: 'k3' });
    expect(await createRuntimeKey(ctx(), { name: 'k4', workflows: typo, newWorkflows: true })).toMatchObject({
      name: 'k4',
    });
    expect((await t.db.runtimeKey.findMany({ orderBy: { name: 'asc' } })).map((k) => k.workflows)).toEqual([
      [known],
      ['*'],
      [typo],
    ]);
  });

  it('A1: creating and revoking a key is audited with where the request came from', async () => {
    await makeRun(t.db, 'wf_origin');
    const request = { ip: '198.51.100.23', userAgent: 'console-test', requestId: randomUUID() };
    const key = await createRuntimeKey({ ...ctx(), request }, { name: `k-${suffix()}`, workflows: 'wf_origin' });
    await revokeRuntimeKey({ ...ctx(), request }, { keyId: key.id, reason: 'rotated' });
    const rows = await t.owner<{ action: string; ip: string | null; request_id: string | null }>(
      `SELECT action, ip, request_id FROM audit_entry WHERE subject_id = $1 ORDER BY id`,
      [key.id],
    );
    expect(rows.rows).toEqual([
      { action: 'runtime_key.create', ip: request.ip, request_id: request.requestId },
      { action: 'runtime_key.revoke', ip: request.ip, request_id: request.requestId },
    ]);
  });
});
