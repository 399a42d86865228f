// The peer in the claims benchmark: pg-boss 10 doing the same dedupe job on the same database.
// `send(queue, data, { singletonKey })` returns a job id for the first send of a key and null for a
// duplicate, but only on a queue whose policy makes the key unique: on pg-boss 10's default
// 'standard' policy every send creates a job. We use policy 'short' (a unique index on
// (queue, singleton_key) over jobs in state 'created'): nothing consumes the bench queues, so every
// job stays queued and every duplicate is refused. That is the peer's best case: in production a key
// dedupes only while its job is queued ('short'), active ('singleton') or either ('stately'); once a
// job completes, the same key is accepted again, whereas a ledger key stays claimed for good (S1).
import PgBoss from 'pg-boss';
import pg from 'pg';

export const PEER_SCHEMA = 'bench_peer';

export interface Peer {
  /** Creates a fresh 'short'-policy queue for one measurement and returns its name. */
  queue(suffix: string): Promise<string>;
  /** One claim attempt: true when this send created the job (the key's winner). */
  send(queue: string, key: string): Promise<boolean>;
  /** Jobs held by a queue (every state). */
  count(queue: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startPeer(ownerUrl: string, connections: number): Promise<Peer> {
  const boss = new PgBoss({
    connectionString: ownerUrl,
    schema: PEER_SCHEMA,
    migrate: true,
    supervise: false,
    schedule: false,
    max: connections,
  });
  boss.on('error', (error) => console.error(`[pg-boss peer] ${error.message}`));
  await boss.start();
  const reader = new pg.Client({ connectionString: ownerUrl });
  await reader.connect();
  const run = Date.now().toString(36);
  return {
    async queue(suffix) {
      const name = `claims_${run}_${suffix}`;
      await boss.createQueue(name, { name, policy: 'short' });
      return name;
    },
    async send(queue, key) {
      const id = await boss.send(queue, { key }, { singletonKey: key });
      return id !== null;
    },
    async count(queue) {
      const r = await reader.query<{ n: string }>(`SELECT count(*) AS n FROM ${PEER_SCHEMA}.job WHERE name = $1`, [
        queue,
      ]);
      return Number(r.rows[0]!.n);
    },
    async stop() {
      await reader.end();
      await boss.stop({ graceful: false, wait: true });
    },
  };
}
