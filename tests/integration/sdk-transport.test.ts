// The HTTP transport's retry path (Z5) and the live conformance check (K4).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkConformance, createLedger, defineTool, httpTransport } from '@/lib/sdk/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeTool } from '../helpers/factories.ts';
import { BASE, makeKey, routeFetch, useApiDb } from './api-support.ts';

let t: TestDatabase;
let token: string;
let toolName: string;

beforeAll(async () => {
  t = await createTestDatabase();
  useApiDb(t.db);
  token = (await makeKey(t.db)).token;
  toolName = (await makeTool(t.db)).name;
});

describe('HTTP transport', () => {
  it('Z5: when the answer to a claim is lost, the transport retries with the same Idempotency-Key and gets the first answer: one claim, one attempt', async () => {
    const seen: string[] = [];
    let dropped = 0;
    const lossy: typeof fetch = async (input, init) => {
      const response = await routeFetch(input, init);
      const key = new Headers(init?.headers).get('idempotency-key');
      if (key) seen.push(key);
      if (String(input).endsWith('/effects/claim') && dropped === 0) {
        dropped += 1;
        throw new TypeError('fetch failed: connection reset'); // the server did the work; the answer is lost
      }
      return response;
    };
    const ledger = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: lossy }));
    const run = await ledger.createRun({ workflow: 'wf', triggerId: `evt-${randomUUID()}` });
    const result = await ledger.effect(
      { run: run.runId, tool: toolName, action: 'campaign_welcome', record: 'r1', target: 'lossy@example.com' },
      async () => ({ status: 201, headers: [], body: new TextEncoder().encode('{"id":"m-1"}') }),
    );
    expect(result).toMatchObject({ status: 'done', receipt: 'm-1' });
    expect(dropped).toBe(1);
    const claimKeys = seen.slice(1, 3);
    expect(claimKeys[0]).toBe(claimKeys[1]);
    expect(await t.db.attempt.count({ where: { key: result.key } })).toBe(1);
  });

  it('K4: the live conformance check claims every variant against the ledger: key and epoch do not move; its claim is given back', async () => {
    const ledger = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: routeFetch }));
    const run = await ledger.createRun({ workflow: 'wf', triggerId: `evt-${randomUUID()}` });
    // The customer directory the tool looks ids up in (case and surrounding space do not matter).
    const lookUp = (typed: string) => {
      if (typed.normalize('NFKC').trim().toLowerCase() !== 'c-9') throw new Error(`no customer ${typed}`);
      return { id: 'c-9', email: 'Live@Example.com' };
    };
    const tool = defineTool({
      name: toolName,
      action: 'campaign_welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      resolve: (a: { customerId: string; subject: string; body: string }) => ({
        record: lookUp(a.customerId).id,
        target: lookUp(a.customerId).email,
      }),
    });
    const report = await checkConformance(tool, {
      sample: { customerId: 'C-9', subject: 'Hello', body: 'World' },
      live: { transport: ledger.transport, runId: run.runId },
    });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    // Its one claim is given back (failed frees the key, S3): the real send can claim it.
    const effects = await t.db.effect.findMany({ where: { runId: run.runId } });
    expect(effects.map((e) => e.state)).toEqual(['failed']);
    const real = await ledger.transport.claim({
      runId: run.runId,
      tool: toolName,
      action: 'campaign_welcome',
      recordId: 'c-9',
      target: 'live@example.com',
    });
    expect(real.claimed).toBe(true);
  });

  it('R1: a parser that throws never loses the raw response: the bytes go with the unknown report and are stored untouched', async () => {
    const ledger = createLedger(httpTransport({ baseUrl: BASE, runtimeKey: token, fetch: routeFetch }));
    const run = await ledger.createRun({ workflow: 'wf', triggerId: `evt-${randomUUID()}` });
    const bytes = new Uint8Array([0xff, 0x00, 0x7b, 0x22, 0xfe]);
    let parsed = false;
    const result = await ledger.effect(
      { run: run.runId, tool: toolName, action: 'campaign_welcome', record: 'r-raw', target: 'raw@example.com' },
      async () => ({
        status: 200,
        headers: [
          ['X-Weird', 'a'],
          ['x-weird', 'b'],
        ],
        body: bytes,
      }),
      {
        classify: () => {
          parsed = true;
          throw new SyntaxError('unexpected byte');
        },
      },
    );
    expect(parsed).toBe(true);
    expect(result.status).toBe('unknown');
    const attempt = await t.db.attempt.findFirstOrThrow({ where: { key: result.key } });
    expect([...attempt.responseBody!]).toEqual([...bytes]);
    expect(attempt.responseHeaders).toEqual([
      ['X-Weird', 'a'],
      ['x-weird', 'b'],
    ]);
    expect(attempt.responseStatus).toBe(200);
  });
});
