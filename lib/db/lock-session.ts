// The dedicated connections that hold session advisory locks: the worker leader's (lib/ops/leader.ts)
// and the replay chunk locks (lib/replay/worker.ts). PostgreSQL frees such a lock only when it ends
// the session, and a worker whose machine is lost (power, network) never says goodbye: with the
// operating system's defaults the server would keep the session, and the locks with it, for about
// two hours, and no other worker could lead or rescue that worker's chunks. On these connections the
// server probes an idle session after 5 s and ends it after 3 unanswered probes 2 s apart, or once
// data it sent stays unacknowledged for 10 s: a lost worker's locks are free within seconds.
// (PostgreSQL applies these settings to TCP connections; a Unix-socket session reports 0 and needs none.)
import pg from 'pg';

export const LOCK_SESSION_SETTINGS = {
  tcp_keepalives_idle: 5,
  tcp_keepalives_interval: 2,
  tcp_keepalives_count: 3,
  tcp_user_timeout: 10_000,
} as const;

/**
 * A connected client for holding advisory locks, with the keepalive settings above, set with SET
 * after connecting rather than as startup options so a session-mode pooler in between accepts them.
 * `onError` hears a connection that breaks later (without a listener the error would end the process).
 */
export async function openLockSession(config: pg.ClientConfig, onError: (error: Error) => void): Promise<pg.Client> {
  // Client-side keepalive too: this process then notices a server that went away.
  const client = new pg.Client({ keepAlive: true, keepAliveInitialDelayMillis: 5_000, ...config });
  client.on('error', onError);
  try {
    await client.connect();
    await client.query(
      Object.entries(LOCK_SESSION_SETTINGS)
        .map(([name, value]) => `SET ${name} = ${value}`)
        .join('; '),
    );
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}
