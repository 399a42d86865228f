// Declarative setup over the management API (POST /manage/apply, docs/MANAGE.md): a dry run lists the
// changes and writes nothing; applying creates the tools, keys and grants; applying the same file
// again changes nothing; a grant taken out of the file is removed; every change is audited with the
// file's SHA-256; only an admin may apply, and a bad document is refused naming the entry.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { call, person, type Person } from './manage-support.ts';

let t: TestDatabase;
let admin: Person;
let operator: Person;
let support: Person;
const SHA = 'ab'.repeat(32);

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  process.env.DATABASE_URL = t.appUrl;
  (await import('@/lib/env.ts')).resetEnvCache();
  admin = await person(t.db, 'admin');
  operator = await person(t.db, 'operator');
  support = await person(t.db, 'support');
});

function setup(wf: string, tool: string, grants: { user: string; role: string }[]) {
  return {
    tools: [{ name: tool, actions: ['receipt'], targetType: 'email', provider: 'sandbox', generatedInputs: ['body'] }],
    runtimeKeys: [{ name: `runner-${wf}`, workflows: [wf] }],
    workflows: { [wf]: { grants } },
  };
}

/** What an apply may change, and the trail's entries other than token uses (ok and refused). */
async function settings() {
  const [tools, keys, grants, trail] = await Promise.all([
    t.db.toolDefinition.count(),
    t.db.runtimeKey.count(),
    t.db.roleGrant.count(),
    t.owner<{ ok: number; refused: number }>(
      `SELECT count(*) FILTER (WHERE outcome = 'ok')::int AS ok, count(*) FILTER (WHERE outcome = 'refused')::int AS refused
         FROM audit_entry WHERE action <> 'access_token.use'`,
    ),
  ]);
  return { tools, keys, grants, ...trail.rows[0]! };
}

type Applied = { changes: { kind: string; action: string }[]; secrets: { token: string }[] };

describe('declarative setup', () => {
  it('dry run writes nothing; apply makes the changes once; the same file again changes nothing; a removed grant is removed', async () => {
    const wf = `wf_${suffix()}`;
    const tool = `mail_${suffix()}`;
    const doc = setup(wf, tool, [
      { user: operator.email, role: 'operator' },
      { user: support.email, role: 'support' },
    ]);
    const before = await settings();
    const grantsBefore = await t.db.roleGrant.count();
    const dry = await call('POST', '/apply', admin, { document: doc, sha256: SHA, dryRun: true });
    expect(dry.status).toBe(200);
    expect((dry.body as unknown as Applied).changes.map((c) => `${c.kind} ${c.action}`)).toEqual([
      'tool create',
      'runtime_key create',
      'grant add',
      'grant add',
    ]);
    // Nothing but the call's own record on the token's chain (access_token.use).
    expect(await settings()).toEqual(before);
    expect(await t.db.roleGrant.count()).toBe(grantsBefore);
    expect(await t.db.toolDefinition.count({ where: { name: tool } })).toBe(0);

    const applied = await call('POST', '/apply', admin, { document: doc, sha256: SHA });
    expect(applied.status).toBe(200);
    const body = applied.body as unknown as Applied;
    expect(body.changes).toHaveLength(4);
    expect(body.secrets[0]!.token).toMatch(/^elk_/);
    expect(await t.db.roleGrant.count({ where: { workflow: wf } })).toBe(2);
    const audited = await t.owner<{ sha: string }>(
      `SELECT detail->>'sha256' AS sha FROM audit_entry WHERE action = 'config.apply' AND actor_id = $1`,
      [admin.id],
    );
    expect(audited.rows.map((r) => r.sha)).toEqual([SHA, SHA, SHA, SHA]);

    const again = await call('POST', '/apply', admin, { document: doc, sha256: SHA });
    expect((again.body as unknown as Applied).changes).toEqual([]);

    const fewer = setup(wf, tool, [{ user: operator.email, role: 'operator' }]);
    fewer.tools[0]!.actions = ['receipt', 'welcome'];
    const removed = await call('POST', '/apply', admin, { document: fewer, sha256: 'cd'.repeat(32) });
    expect((removed.body as unknown as Applied).changes).toEqual([
      { kind: 'tool', action: 'update', name: tool, fields: ['actions'] },
      { kind: 'grant', action: 'remove', workflow: wf, user: support.email, role: 'support' },
    ]);
    const left = await t.db.roleGrant.findMany({ where: { workflow: wf }, select: { userId: true, role: true } });
    expect(left).toEqual([{ userId: operator.id, role: 'operator' }]);
  });

  it('only an admin applies (403, audited); an unknown person or a bad entry is refused naming it, nothing written', async () => {
    const wf = `wf_${suffix()}`;
    const doc = setup(wf, `mail_${suffix()}`, [{ user: operator.email, role: 'operator' }]);
    const before = await settings();
    expect((await call('POST', '/apply', operator, { document: doc, sha256: SHA })).status).toBe(403);
    const nobody = setup(wf, `mail_${suffix()}`, [{ user: 'nobody@example.com', role: 'operator' }]);
    expect(await call('POST', '/apply', admin, { document: nobody, sha256: SHA })).toMatchObject({
      status: 422,
      body: { field: `workflows.${wf}.grants.0.user` },
    });
    const badRole = setup(wf, `mail_${suffix()}`, [{ user: operator.email, role: 'boss' }]);
    const refused = await call('POST', '/apply', admin, { document: badRole, sha256: SHA });
    expect(refused.status).toBe(422);
    expect(refused.body.field).toContain('role');
    expect(await call('POST', '/apply', admin, { document: doc })).toMatchObject({
      status: 422,
      body: { field: 'sha256' },
    });
    expect(await t.db.roleGrant.count({ where: { workflow: wf } })).toBe(0);
    expect(await settings()).toMatchObject({ ...before, refused: before.refused + 1 });
  });
});
