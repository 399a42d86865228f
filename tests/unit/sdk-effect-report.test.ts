// R1: an effect over the HTTP transport is two ledger calls, claim and outcome with the raw response;
// when the outcome cannot be reported the raw response is sent on its own and the error hands the
// unsent report back. Against a real node:http server that answers as each test scripts it.
import { describe, expect, it } from 'vitest';
import { createLedger, httpTransport, type HttpTransportOptions } from '@/lib/sdk/index.ts';
import { outcomeBody } from '@/lib/api/schemas.ts';
import { ledgerApiError as failure, problemReply, useMisbehavingServers } from '../helpers/misbehaving-server.ts';

const RUN_ID = '00000000-0000-4000-8000-000000000001';
const serve = useMisbehavingServers();
const transport = (server: { url: string }, options: Partial<HttpTransportOptions> = {}) =>
  httpTransport({ baseUrl: server.url, runtimeKey: 'elk_test_key', retryBaseDelayMs: 1, ...options });

describe('Ledger over the HTTP transport', () => {
  const claimWon = {
    claimed: true,
    key: 'v1/t/tool/a/r/email/x%40example.com',
    epoch: 1,
    attemptId: '00000000-0000-4000-8000-0000000000aa',
    idempotencyKey: 'el1-abc',
  };
  const providerBytes = new Uint8Array([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0x6d, 0x31, 0x22, 0x7d]); // {"id":"m1"}

  it('R1: an effect is two ledger calls, claim and outcome, and the outcome carries the raw response', async () => {
    const server = await serve((i) => (i === 0 ? { status: 201, body: claimWon } : { status: 200, body: {} }));
    const ledger = createLedger(transport(server));
    const result = await ledger.effect(
      { run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' },
      async () => ({ status: 201, headers: [['x-request', '1']], body: providerBytes }),
    );
    expect(result).toMatchObject({ status: 'done', receipt: 'm1' });
    expect(server.received.map((r) => r.path)).toEqual(['/api/v1/effects/claim', '/api/v1/effects/outcome']);
    expect(JSON.parse(server.received[1]!.body)).toMatchObject({
      outcome: 'done',
      receipt: 'm1',
      attemptId: claimWon.attemptId,
      response: {
        status: 201,
        headers: [['x-request', '1']],
        bodyBase64: Buffer.from(providerBytes).toString('base64'),
      },
    });
  });

  it("R1: a shutdown (the transport's signal) during the provider call still reports the call's outcome; the next effect is refused", async () => {
    const server = await serve((_, request) =>
      request.path.endsWith('/effects/claim') ? { status: 201, body: claimWon } : { status: 200, body: {} },
    );
    const shutdown = new AbortController();
    const ledger = createLedger(transport(server, { signal: shutdown.signal }));
    const spec = { run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' };
    const result = await ledger.effect(spec, async () => {
      shutdown.abort(new Error('SIGTERM'));
      return { status: 201, headers: [], body: providerBytes };
    });
    expect(result).toMatchObject({ status: 'done', receipt: 'm1' });
    expect(server.received.map((r) => r.path)).toEqual(['/api/v1/effects/claim', '/api/v1/effects/outcome']);
    expect(
      await failure(ledger.effect(spec, async () => ({ status: 201, headers: [], body: providerBytes }))),
    ).toMatchObject({ code: 'aborted' });
    expect(server.received).toHaveLength(2);
  });

  it('R3: an "already existed" reference whose lookup hangs is given up at timeoutMs: the effect is reported unknown', async () => {
    const server = await serve((_, request) =>
      request.path.endsWith('/effects/claim') ? { status: 201, body: claimWon } : { status: 200, body: {} },
    );
    const provider = {
      classify: () => ({ outcome: 'already_existed' as const, reference: 'msg-prior', evidence: {} }),
      followReference: () => new Promise<never>(() => undefined),
    };
    const started = Date.now();
    const result = await createLedger(transport(server)).effect(
      { run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' },
      async () => ({ status: 200, headers: [], body: providerBytes }),
      { provider, timeoutMs: 200 },
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result).toMatchObject({ status: 'unknown', evidence: { why: 'following the prior object failed' } });
    expect(JSON.parse(server.received[1]!.body)).toMatchObject({ outcome: 'unknown' });
  });

  it('R1: a provider answer over what the ledger stores (a 3 MiB body, 600 headers, a 20,000-character value) is reported cut and marked, never refused: the outcome goes through', async () => {
    const server = await serve((_, request) =>
      request.path.endsWith('/effects/claim') ? { status: 201, body: claimWon } : { status: 200, body: {} },
    );
    const big = new Uint8Array(3 * 1024 * 1024).fill(0x61);
    big.set(providerBytes, 0);
    const headers: [string, string][] = Array.from({ length: 600 }, (_, i) => [`x-h${i}`, 'v']);
    headers[0] = ['x-long', 'y'.repeat(20_000)];
    const result = await createLedger(transport(server)).effect(
      { run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' },
      async () => ({ status: 201, headers, body: big }),
      { classify: () => ({ outcome: 'done', receipt: 'm-big' }) },
    );
    expect(result).toMatchObject({ status: 'done', receipt: 'm-big' });
    const sent = JSON.parse(server.received[1]!.body);
    // What the server accepts: the outcome schema the API parses with.
    expect(outcomeBody.safeParse(sent).success).toBe(true);
    expect(Buffer.from(sent.response.bodyBase64, 'base64').byteLength).toBe(1024 * 1024);
    const cut = sent.response.headers.find(([n]: [string, string]) => n === 'x-effect-ledger-cut');
    expect(cut?.[1]).toMatch(/body of 3145728 bytes.*shortened.*600 header pairs/);
  });

  it('R1: when the outcome cannot be reported, the raw response is stored on its own and the error hands back the unsent report', async () => {
    const server = await serve((_, request) =>
      request.path.endsWith('/effects/claim')
        ? { status: 201, body: claimWon }
        : request.path.endsWith('/effects/outcome')
          ? problemReply(500, 'internal')
          : { status: 201, body: { attemptId: claimWon.attemptId, bytes: providerBytes.length } },
    );
    const ledger = createLedger(transport(server));
    const error = await failure(
      ledger.effect({ run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' }, async () => ({
        status: 201,
        headers: [['x-request', '1']],
        body: providerBytes,
      })),
    );
    expect(error).toMatchObject({ status: 500, code: 'internal' });
    expect(server.received.map((r) => r.path)).toEqual([
      '/api/v1/effects/claim',
      '/api/v1/effects/outcome',
      `/api/v1/attempts/${claimWon.attemptId}/response`,
    ]);
    const encoded = {
      status: 201,
      headers: [['x-request', '1']],
      bodyBase64: Buffer.from(providerBytes).toString('base64'),
    };
    expect(JSON.parse(server.received[2]!.body)).toEqual(encoded);
    expect(error.unreported).toMatchObject({ key: claimWon.key, outcome: 'done', receipt: 'm1', response: encoded });
  });

  it('R1: with the ledger unreachable the report and the raw response both fail; the error still carries them', async () => {
    const server = await serve((i) => (i === 0 ? { status: 201, body: claimWon } : 'drop'));
    const error = await failure(
      createLedger(transport(server, { retries: 1 })).effect(
        { run: RUN_ID, tool: 'tool', action: 'a', record: 'r', target: 'x@example.com' },
        async () => ({ status: 201, headers: [], body: providerBytes }),
      ),
    );
    expect(error.code).toBe('network');
    expect(server.received.map((r) => r.path.split('/').pop())).toEqual([
      'claim',
      'outcome',
      'outcome',
      'response',
      'response',
    ]);
    expect(error.unreported?.response?.bodyBase64).toBe(Buffer.from(providerBytes).toString('base64'));
  });
});
