// The console's one job sender per process: a start that failed (the database down for a moment) was
// cached, so every later replay of that process got the same old error until it was restarted. The
// failed start is now forgotten and the next call starts a sender.
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installJobEngine, sharedJobSender } from '@/lib/replay/jobs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let t: TestDatabase;
let sender: PgBoss | undefined;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 });
  await installJobEngine(t.ownerUrl);
});
afterAll(async () => {
  await sender?.stop({ graceful: false });
});

describe('the shared job sender', () => {
  it('a failed start is not kept: the next call starts a sender that queues jobs', async () => {
    await expect(sharedJobSender('postgres://nobody:x@127.0.0.1:1/none')).rejects.toThrow();
    const started = await sharedJobSender(t.appUrl);
    sender = started as PgBoss;
    await started.insert([{ name: 'replay-chunk', data: { replayId: 'none', fromId: '1', toId: '1' } }]);
    const queued = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'replayId' = 'none'`,
    );
    expect(queued.rows[0]!.n).toBe(1);
    // Started once, kept: the same sender answers again.
    expect(await sharedJobSender(t.appUrl)).toBe(started);
  });
});
