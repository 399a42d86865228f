// Issue 17: GET /healthz, /readyz and /metrics, through their route modules with real Requests on a
// real database. Readiness fails (503, a problem document naming the check) on a pending migration
// and on an unreachable database; the metrics count what the agent API answered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET as healthz } from '@/app/healthz/route.ts';
import { GET as metricsGET } from '@/app/metrics/route.ts';
import { GET as readyz } from '@/app/readyz/route.ts';
import { setDb } from '@/lib/api/db.ts';
import { createDb } from '@/lib/db/client.ts';
import { migrationNames } from '@/lib/ops/preflight.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { makeKey, post, useApiDb } from './api-support.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  useApiDb(t.db);
});
afterAll(() => setDb(undefined));

const scrape = async () => (await metricsGET(new Request('http://x/metrics'))).text();
/** A sample's value in the exposition text (0 when the series does not exist yet). */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('operations endpoints', () => {
  it('GET /healthz answers 200 without asking the database', async () => {
    setDb(createDb('postgres://nobody:x@127.0.0.1:1/none', 1));
    try {
      const res = healthz();
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    } finally {
      useApiDb(t.db);
    }
  });

  it('GET /readyz: 200 on a migrated database; 503 naming a pending migration and npm run migrate', async () => {
    const ok = await readyz();
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });

    const last = migrationNames().at(-1)!;
    const saved = await t.owner('SELECT * FROM _prisma_migrations WHERE migration_name = $1', [last]);
    await t.owner('DELETE FROM _prisma_migrations WHERE migration_name = $1', [last]);
    try {
      const res = await readyz();
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('retry-after')).toBeTruthy();
      const body = await res.json();
      expect(body).toMatchObject({ status: 503, code: 'unavailable', checks: { database: 'ok' } });
      expect(body.checks.migrations).toBe(`pending: ${last} (apply with npm run migrate)`);
    } finally {
      const row = saved.rows[0]!;
      const cols = Object.keys(row);
      await t.owner(
        `INSERT INTO _prisma_migrations (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        cols.map((c) => row[c]),
      );
    }
    expect((await readyz()).status).toBe(200);
  });

  it('GET /readyz: 503 naming the database when it cannot be reached, without the driver text (it goes to the log)', async () => {
    const unreachable = createDb('postgres://nobody:x@127.0.0.1:1/none', 1);
    setDb(unreachable);
    try {
      const res = await readyz();
      expect(res.status).toBe(503);
      const text = await res.text();
      const body = JSON.parse(text);
      expect(body.checks).toEqual({ database: 'unreachable', migrations: 'not checked' });
      // The probe answers anyone: no address, port or error code of the database leaks from it.
      expect(text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|nobody/);
    } finally {
      useApiDb(t.db);
      await unreachable.$disconnect();
    }
  });

  it('GET /metrics: Prometheus text counting claims by result, outcomes by state, latency and the pool', async () => {
    const token = (await makeKey(t.db)).token;
    const tool = (await makeTool(t.db)).name;
    const run = await makeRun(t.db);
    const before = await scrape();
    const body = { runId: run.runId, tool, action: 'campaign_welcome', recordId: 'r-1', target: 'ops@example.com' };
    const won = await post('/effects/claim', body, { token });
    expect(won.status).toBe(201);
    const claim = (await won.json()) as { key: string; epoch: number; attemptId: string };
    expect((await post('/effects/claim', body, { token })).status).toBe(200);
    expect((await post('/effects/claim', { ...body, target: 'not an address' }, { token })).status).toBe(422);
    const done = await post(
      '/effects/outcome',
      { key: claim.key, epoch: claim.epoch, outcome: 'done', receipt: 'msg-ops-1', attemptId: claim.attemptId },
      { token },
    );
    expect(done.status).toBe(200);

    const res = await metricsGET(new Request('http://x/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const after = await res.text();
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect(delta('ledger_claims_total{result="won"}')).toBe(1);
    expect(delta('ledger_claims_total{result="lost"}')).toBe(1);
    expect(delta('ledger_claims_total{result="refused"}')).toBe(1);
    expect(delta('ledger_transitions_total{state="done"}')).toBe(1);
    expect(delta('ledger_http_request_duration_seconds_count{operation="effect.claim",status="201"}')).toBe(1);
    expect(after).toMatch(/^ledger_db_pool_waiting \d+$/m);
    expect(after).toMatch(/^ledger_db_pool_connections\{state="total"\} [1-9]\d*$/m);
    expect(after).toContain('ledger_process_resident_memory_bytes');
  });
});
