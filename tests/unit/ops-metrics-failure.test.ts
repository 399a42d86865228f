// A worker's /metrics scrape that fails must not end the worker: the replay progress gauge, read from
// the database at each scrape, is left out when the database cannot be reached, and a scrape that
// fails anyway is answered 500 and logged (unanswered, its rejection ended the leading worker).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gauge } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '@/lib/db/client.ts';
import { exposition, metrics } from '@/lib/ops/metrics.ts';
import { watchReplays } from '@/lib/ops/work-metrics.ts';
import { startWorkerHttp } from '@/scripts/support/worker-http.ts';

const unreachable = createDb('postgres://nobody:x@127.0.0.1:1/none', 1);
let server: Server | undefined;
afterAll(async () => {
  server?.close();
  await unreachable.$disconnect();
});

describe('metrics scrapes that fail', () => {
  it('the replay progress gauge is left out when its database cannot be reached; the rest is scraped', async () => {
    watchReplays(unreachable, () => true);
    const { body } = await exposition();
    expect(body).not.toMatch(/^ledger_replay_progress_items\{/m);
    expect(body).toMatch(/^ledger_db_pool_waiting \d+$/m);
  });

  it("a worker's /metrics answers 500 when the scrape fails, logs why, and serves the next one", async () => {
    const logged: string[] = [];
    server = await startWorkerHttp(0, { heartbeat: () => Date.now(), log: (line) => logged.push(line) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    new Gauge({
      name: 'test_broken_gauge',
      help: 'A gauge whose collection fails.',
      registers: [metrics().registry],
      collect() {
        throw new Error('collection failed');
      },
    });
    try {
      const res = await fetch(url);
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ status: 500, code: 'internal' });
      expect(logged).toEqual(['metrics scrape failed: collection failed']);
    } finally {
      metrics().registry.removeSingleMetric('test_broken_gauge');
    }
    const next = await fetch(url);
    expect(next.status).toBe(200);
    expect(await next.text()).toContain('ledger_process_resident_memory_bytes');
  });
});
