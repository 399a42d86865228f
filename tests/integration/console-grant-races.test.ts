// Z1, Z4: grant changes under concurrency and the per-process session memory. Removing the same grant
// twice at once removes it once and answers the other "not found" with nothing written; a grant added
// or removed through this process counts at the person's very next request, even one whose session
// this process remembered a moment ago.
import pg from 'pg';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { suffix } from '../helpers/factories.ts';
import { resetEnvCache } from '@/lib/env.ts';

let t: TestDatabase;
let grants: typeof import('@/lib/auth/grant-commands.ts');
let users: typeof import('@/lib/auth/users.ts');
let session: typeof import('@/lib/auth/session.ts');
let cache: typeof import('@/lib/auth/session-cache.ts');
let guard: typeof import('@/lib/auth/guard.ts');
const system = { kind: 'system' as const, id: 'test', label: 'test setup' };
const admin = { kind: 'user' as const, id: crypto.randomUUID(), label: 'admin@example.com', role: 'admin' as const };

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 6 });
  process.env.NEXTAUTH_SECRET = 'console-grant-races-test-secret';
  resetEnvCache();
  grants = await import('@/lib/auth/grant-commands.ts');
  users = await import('@/lib/auth/users.ts');
  session = await import('@/lib/auth/session.ts');
  cache = await import('@/lib/auth/session-cache.ts');
  guard = await import('@/lib/auth/guard.ts');
});

const ctx = () => ({ db: t.db, actor: admin });

async function person() {
  const email = `grantee-${suffix()}@example.com`;
  const u = await users.insertUser(
    t.db,
    { email, name: 'G', role: 'auditor', password: 'a-long-enough-password' },
    system,
  );
  return { id: u.id, email, sessionVersion: u.sessionVersion };
}

const grantOn = (userId: string, workflow: string) =>
  grants.addGrant(ctx(), { userId, role: 'support', workflow, newWorkflow: true, reason: 'covers the queue' });

/** Waits until `n` statements of this database wait on a lock (each poll is one query, no timer). */
async function lockWaiters(n: number) {
  const started = Date.now();
  for (;;) {
    const { rows } = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n >= n) return;
    if (Date.now() - started > 30_000) throw new Error(`fewer than ${n} statements ever waited on a lock`);
  }
}

describe('Z1: removing a grant twice at once', () => {
  it('Z1: the same grant removed twice at once is removed once; the other removal is a 404 that writes nothing', async () => {
    const p = await person();
    const grant = await grantOn(p.id, `wf_${suffix()}`);
    // Hold the person's row, so both removals have found the grant before either of them deletes it.
    const blocker = new pg.Client({ connectionString: t.ownerUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM app_user WHERE id = $1 FOR UPDATE', [p.id]);
      const removals = [1, 2].map(() =>
        grants.removeGrant(ctx(), { grantId: grant.id, reason: 'moved to another team' }),
      );
      await lockWaiters(2);
      await blocker.query('COMMIT');
      const settled = await Promise.allSettled(removals);
      expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
      const refused = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult;
      expect(guard.toActionError(refused.reason)).toMatchObject({ ok: false, code: 'not_found', field: 'grantId' });
    } finally {
      await blocker.end();
    }
    expect(await t.db.roleGrant.count({ where: { id: grant.id } })).toBe(0);
    const entries = await t.db.auditEntry.findMany({ where: { subjectId: p.id, action: 'user.ungrant' } });
    expect(entries.map((e) => e.outcome)).toEqual(['ok']);
  });
});

describe('Z4: grant changes and the remembered sessions of this process', () => {
  it('Z4: a grant added or removed through this process counts at the next request, though the session was just remembered', async () => {
    const p = await person();
    const cookie = `next-auth.session-token=${await session.mintSessionToken(p)}`;
    // The clock stands still for the reads, so the memory's second never runs out on a slow machine.
    const now = Date.now();
    const read = async () => {
      const clock = vi.spyOn(Date, 'now').mockReturnValue(now);
      try {
        const s = await cache.cachedSessionFromCookie(cookie, t.db);
        return s.user?.grants.map((g) => `${g.role}@${g.workflow ?? '*'}`).sort();
      } finally {
        clock.mockRestore();
      }
    };
    expect(await read()).toEqual(['auditor@*']);
    const workflow = `wf_${suffix()}`;
    const grant = await grantOn(p.id, workflow);
    expect(await read()).toEqual(['auditor@*', `support@${workflow}`]);
    await grants.removeGrant(ctx(), { grantId: grant.id, reason: 'back to reading only' });
    expect(await read()).toEqual(['auditor@*']);
  });
});
