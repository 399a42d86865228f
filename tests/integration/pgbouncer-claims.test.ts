// Issue 17: the agent API through PgBouncer 1.18 in transaction mode (which does not track named
// prepared statements), with `pgbouncer=true` in DATABASE_URL: 50 concurrent claims of one key,
// exactly one winner (S1), one effect row, and the losers told who holds it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { POST as claimPOST } from '@/app/api/v1/effects/claim/route.ts';
import { setDb } from '@/lib/api/db.ts';
import { createDb, type Db } from '@/lib/db/client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { makeKey } from './api-support.ts';

let t: TestDatabase;
let bouncer: PgBouncer;
let pooled: Db;

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  const server = new URL(inject('ownerUrl'));
  bouncer = await startPgBouncer(
    { host: server.hostname, port: Number(server.port) },
    { [inject('appUser')]: inject('appPassword') },
  );
  const url = new URL(bouncer.through(t.appUrl));
  url.searchParams.set('application_name', 'via-pgbouncer');
  pooled = createDb(url.toString(), 50);
  setDb(pooled);
});

afterAll(async () => {
  setDb(undefined);
  await pooled?.$disconnect();
  await bouncer?.stop();
});

describe('through PgBouncer in transaction mode', () => {
  it(
    'S1: 50 concurrent claims of one key: exactly one 201, 49 answers naming the holder, one effect row',
    { timeout: 120_000 },
    async () => {
      const token = (await makeKey(t.db)).token;
      const tool = (await makeTool(t.db)).name;
      const run = await makeRun(t.db);
      const body = JSON.stringify({
        runId: run.runId,
        tool,
        action: 'campaign_welcome',
        recordId: 'c-1',
        target: 'pool@example.com',
      });
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          claimPOST(
            new Request('http://x/api/v1/effects/claim', {
              method: 'POST',
              headers: { authorization: `Bearer ${token}` },
              body,
            }),
          ),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(49);
      const lost = await Promise.all(answers.filter((a) => a.status === 200).map((a) => a.json()));
      expect(new Set(lost.map((l: { claimed: boolean; state: string }) => `${l.claimed}:${l.state}`))).toEqual(
        new Set(['false:pending']),
      );
      const rows = await t.owner<{ n: number }>(
        `SELECT count(*)::int AS n FROM effect e JOIN effect_key k ON k.key = e.key WHERE k.key LIKE '%pool%40example.com%'`,
      );
      expect(rows.rows[0]!.n).toBe(1);
      // The requests went through PgBouncer: 50 client connections shared at most its pool of 10
      // server connections (which carry the clients' application_name).
      const server = await t.owner<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'via-pgbouncer'`,
      );
      expect(server.rows[0]!.n).toBeGreaterThan(0);
      expect(server.rows[0]!.n).toBeLessThanOrEqual(10);
    },
  );
});
