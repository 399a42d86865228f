// Console read models for admins and auditors: the runtime-key list is paged and searchable, and the
// audit trail's subjects are named (a person by email, a runtime key by name, a run by workflow and event).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, suffix } from '../helpers/factories.ts';
import { createRuntimeKey } from '@/lib/auth/admin-commands.ts';
import { RUNTIME_KEYS_PER_PAGE, runtimeKeysPage } from '@/lib/read-models/admin.ts';
import { subjectNames, subjectRef } from '@/lib/read-models/subject-names.ts';
import { insertUser } from '@/lib/auth/users.ts';

let t: TestDatabase;
const admin = { kind: 'user' as const, id: randomUUID(), label: 'admin', role: 'admin' as const };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
});

describe('runtime keys page', () => {
  it('Z6: pages through many keys and finds one by name, prefix or workflow', async () => {
    const workflow = `wf_${suffix()}`;
    await makeRun(t.db, workflow);
    const made = [];
    for (let i = 0; i < RUNTIME_KEYS_PER_PAGE + 7; i++)
      made.push(
        await createRuntimeKey({ db: t.db, actor: admin }, { name: `agent-${i}`, workflows: i === 3 ? workflow : '*' }),
      );
    const first = await runtimeKeysPage(t.db);
    expect(first).toMatchObject({ total: made.length, page: 1, pages: 2 });
    expect(first.rows).toHaveLength(RUNTIME_KEYS_PER_PAGE);
    const second = await runtimeKeysPage(t.db, { page: 2 });
    expect(second.rows).toHaveLength(7);
    const seen = new Set([...first.rows, ...second.rows].map((k) => k.id));
    expect(seen.size).toBe(made.length); // every key on exactly one page
    expect((await runtimeKeysPage(t.db, { page: 99 })).page).toBe(2); // past the end: the last page

    expect((await runtimeKeysPage(t.db, { q: 'AGENT-17' })).rows.map((k) => k.name)).toEqual(['agent-17']);
    expect((await runtimeKeysPage(t.db, { q: made[5]!.prefix })).rows.map((k) => k.name)).toEqual(['agent-5']);
    expect((await runtimeKeysPage(t.db, { q: workflow })).rows.map((k) => k.name)).toEqual(['agent-3']);
    expect(await runtimeKeysPage(t.db, { q: 'nobody-has-this' })).toMatchObject({ rows: [], total: 0, page: 1 });
  });
});

describe('audit subjects by name', () => {
  it('A1: names people, runtime keys and runs; an id without a row stays as it is', async () => {
    const system = { kind: 'system' as const, id: 'test', label: 'test' };
    const user = await insertUser(
      t.db,
      { email: `named-${suffix()}@example.com`, name: 'Named', role: 'support', password: 'a-long-enough-password' },
      system,
    );
    const key = await createRuntimeKey({ db: t.db, actor: admin }, { name: 'billing-agent', workflows: '*' });
    const run = await makeRun(t.db);
    const missing = randomUUID();
    const names = await subjectNames(t.db, [
      { subjectType: 'user', subjectId: user.id },
      { subjectType: 'runtime_key', subjectId: key.id },
      { subjectType: 'run', subjectId: run.runId },
      { subjectType: 'user', subjectId: missing },
      { subjectType: 'effect', subjectId: 'v1:not-a-uuid' },
    ]);
    expect(names[subjectRef('user', user.id)]).toBe(user.email);
    expect(names[subjectRef('runtime_key', key.id)]).toBe('key billing-agent');
    expect(names[subjectRef('run', run.runId)]).toMatch(/^run \S+ · \S+$/);
    expect(names[subjectRef('user', missing)]).toBeUndefined();
    expect(Object.keys(names)).toHaveLength(3);
  });
});
