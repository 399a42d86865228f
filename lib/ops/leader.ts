// One leader among all worker processes on a database, for the tasks that must not run twice at once
// (the reconciler, the rescue of dead workers' chunks, the sweep of stalled replays): whoever holds a
// session advisory lock on a dedicated connection leads. PostgreSQL drops the lock with the session,
// so a leader that dies (kill -9, a lost network) frees it and another worker takes it at its next
// try. The connection needs a real session: direct to PostgreSQL or through a session-mode pooler,
// never a transaction-mode one (docs/DEPLOYMENT.md). The connection asks the server to notice a lost
// worker within seconds (lib/db/lock-session.ts), so its lock does not outlive the machine for hours.
import type pg from 'pg';
import { openLockSession } from '../db/lock-session.ts';

/** Advisory lock (class, key) pairs; the class is distinct from the replay chunk locks (20583). */
export const LEADER_LOCK_CLASS = 20584;
export const LEADER_LOCKS = { replayMaintenance: 1 } as const;

export interface LeaderOptions {
  connectionString: string;
  lockKey: number;
  /** How often a follower tries to take the lock, and a leader checks its session is alive. */
  intervalMs?: number;
  log?: (line: string) => void;
}

export interface Leadership {
  isLeader(): boolean;
  /** When this process last heard from PostgreSQL on its leader connection (ms since epoch; 0: never). */
  lastContact(): number;
  /** Gives the lock back (a follower waiting on it takes over at its next try) and closes the connection. */
  stop(): Promise<void>;
}

export async function startLeaderElection(options: LeaderOptions): Promise<Leadership> {
  const log = options.log ?? (() => undefined);
  let client: pg.Client | undefined;
  let leader = false;
  let stopped = false;
  let contact = 0;

  const drop = (reason: string) => {
    if (leader) log(`leadership lost: ${reason}`);
    leader = false;
    const old = client;
    client = undefined;
    void old?.end().catch(() => undefined);
  };

  const tick = async () => {
    try {
      if (!client) {
        client = await openLockSession(
          {
            connectionString: options.connectionString,
            application_name: 'ledger-leader',
            // A silent network partition must not leave a leader that believes it still holds the lock.
            query_timeout: 5_000,
            connectionTimeoutMillis: 5_000,
          },
          (e) => drop(`connection: ${e.message}`),
        );
      }
      if (leader) {
        await client.query('SELECT 1'); // the lock lives as long as this session does
        contact = Date.now();
        return;
      }
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
        LEADER_LOCK_CLASS,
        options.lockKey,
      ]);
      contact = Date.now();
      if (r.rows[0]?.ok && !stopped) {
        leader = true;
        log('leadership acquired');
      }
    } catch (error) {
      drop((error as Error).message);
    }
  };

  let running: Promise<void> = tick();
  await running;
  const timer = setInterval(() => {
    running = running.then(tick);
  }, options.intervalMs ?? 2_000);

  return {
    isLeader: () => leader && !stopped,
    lastContact: () => contact,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      if (leader && client) {
        await client
          .query('SELECT pg_advisory_unlock($1, $2)', [LEADER_LOCK_CLASS, options.lockKey])
          .catch(() => undefined);
        log('leadership released');
      }
      leader = false;
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
