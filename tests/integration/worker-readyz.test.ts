// Issue 17: a worker's GET /readyz follows its heartbeat (the last contact of its leader connection
// with PostgreSQL): ready while fresh, 503 once older than the threshold, ready again when fresh. The
// heartbeat comes from a real leader election on a real database; the worker's clock is injected, so
// the heartbeat is aged by moving the clock instead of waiting 15 s.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLeaderElection, type Leadership } from '@/lib/ops/leader.ts';
import { STALE_MS, startWorkerHttp } from '@/scripts/support/worker-http.ts';
import { createTestDatabase } from '../helpers/db.ts';

let leader: Leadership;
let server: Server;
let base: string;
let skewMs = 0;

beforeAll(async () => {
  const t = await createTestDatabase({ poolSize: 1 });
  leader = await startLeaderElection({ connectionString: t.appUrl, lockKey: 9_001, intervalMs: 200 });
  server = await startWorkerHttp(0, { heartbeat: leader.lastContact, now: () => Date.now() + skewMs });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.close();
  await leader?.stop();
});

const readyz = async () => {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
};

describe('worker /readyz and its heartbeat', () => {
  it('ready while the heartbeat is fresh, 503 once it is older than the threshold, ready again when fresh', async () => {
    expect(leader.lastContact()).toBeGreaterThan(0);
    const fresh = await readyz();
    expect(fresh.status).toBe(200);
    expect(fresh.body.status).toBe('ready');
    expect(fresh.body.heartbeatAgeMs).toBeLessThanOrEqual(STALE_MS);

    // The clock runs a minute ahead: the last contact is now over a minute old.
    skewMs = STALE_MS + 60_000;
    const stale = await readyz();
    expect(stale.status).toBe(503);
    expect(stale.type).toBe('application/problem+json');
    expect(stale.body).toMatchObject({ status: 503, code: 'unavailable' });
    expect(stale.body.detail).toMatch(/^no contact with the database for \d+ s \(stale after 15 s\)$/);

    // Just inside the threshold is still ready; just past it is not.
    skewMs = STALE_MS - 5_000;
    expect((await readyz()).status).toBe(200);

    skewMs = 0;
    expect((await readyz()).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('a heartbeat that stops (the leader connection ends) goes stale on the clock', async () => {
    await leader.stop();
    const last = leader.lastContact();
    expect((await readyz()).status).toBe(200);
    skewMs = last + STALE_MS + 1 - Date.now();
    expect((await readyz()).status).toBe(503);
    skewMs = 0;
  });
});
