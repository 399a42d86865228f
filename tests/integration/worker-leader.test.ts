// Issue 17: with several worker processes on one database, exactly one runs the rescue, the sweep and
// the reconciler: the holder of a session advisory lock (lib/ops/leader.ts). Real processes
// (scripts/worker.ts): the leader is killed with SIGKILL and the other takes over; SIGTERM ends a
// worker with exit 0 and hands the lock back.
import { afterAll, describe, expect, it } from 'vitest';
import { LEADER_LOCK_CLASS, LEADER_LOCKS } from '@/lib/ops/leader.ts';
import { installJobEngine } from '@/lib/replay/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { scriptEnv, startScript, TSX, type Started } from '../helpers/processes.ts';

const started: Started[] = [];
afterAll(() => {
  for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

function worker(t: TestDatabase, httpPort?: number): Started {
  const s = startScript(
    ['--import', TSX, 'scripts/worker.ts'],
    scriptEnv({
      DATABASE_URL: t.appUrl,
      NODE_ENV: 'test',
      RECONCILE_INTERVAL_SECONDS: '1',
      REPLAY_CONCURRENCY: '1',
      WORKER_HTTP_PORT: httpPort ? String(httpPort) : undefined,
    }),
  );
  started.push(s);
  return s;
}

/** Sessions holding the leader lock right now, by backend pid. */
async function holders(t: TestDatabase): Promise<number[]> {
  const r = await t.owner<{ pid: number }>(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 AND objid = $2 AND objsubid = 2 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [LEADER_LOCK_CLASS, LEADER_LOCKS.replayMaintenance],
  );
  return r.rows.map((row) => row.pid);
}

const ACQUIRED = 'leadership acquired';

describe('worker leader election', () => {
  it(
    'exactly one of two workers leads; SIGKILL of the leader hands over, SIGTERM exits 0 and releases',
    { timeout: 300_000 },
    async () => {
      const t = await createTestDatabase({ poolSize: 4 });
      await installJobEngine(t.ownerUrl);
      const a = worker(t);
      await a.waitFor('ready:');
      const b = worker(t);
      await b.waitFor('ready:');
      // The first one started took the lock before it was ready; the second found it taken.
      expect(a.output()).toContain(ACQUIRED);
      expect(b.output()).not.toContain(ACQUIRED);
      // Both keep a leader session open; one holds the lock.
      const sessions = await t.owner<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'ledger-leader' AND datname = current_database()`,
      );
      expect(sessions.rows[0]?.n).toBe(2);
      const before = await holders(t);
      expect(before).toHaveLength(1);

      a.child.kill('SIGKILL');
      await a.exited;
      await b.waitFor(ACQUIRED);
      const after = await holders(t);
      expect(after).toHaveLength(1);
      expect(after[0]).not.toBe(before[0]);

      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(0);
      expect(b.output()).toContain('leadership released');
      expect(b.output()).toContain('stopped');
      expect(await holders(t)).toHaveLength(0);
    },
  );
});
