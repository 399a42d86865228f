// The ledgered MCP server over Streamable HTTP (lib/sdk/mcp/transports.ts, http-door.ts), served in
// this process against the agent API over real HTTP: a request runs a tool, read-only ones included,
// only with a runtime key the ledger accepts, and only under the host names the server listens on
// and from no foreign web page (DNS rebinding).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { defineMcpTool, serveHttp } from '@/lib/sdk/mcp/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { lookupSchema, welcomeDefinition } from '../helpers/adapter-agents/team-tool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, userActor } from '../helpers/factories.ts';
import { makeKey } from './api-support.ts';

const WORKFLOW = 'wf_mcp_door';
let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let mcp: { url: string; close(): Promise<void> };
let token: string;
const looked: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 8 });
  api = await startApiServer(t.appUrl, 4);
  token = (await makeKey(t.db, [WORKFLOW])).token;
  const run = await makeRun(t.db, WORKFLOW);
  const definition = welcomeDefinition('send_welcome_door');
  const lookup = defineMcpTool({
    definition: {
      ...definition,
      name: 'lookup_customer',
      resolve: (c: { customerId: string }) => ({ record: c.customerId, target: '' }),
      generated: [],
    },
    description: 'Look a customer up (read-only)',
    inputSchema: lookupSchema,
    execute: (c: { customerId: string }) => {
      looked.push(c.customerId);
      return { customerId: c.customerId, plan: 'team' };
    },
    readOnly: true,
  });
  mcp = await serveHttp({ ledgerUrl: api.url, run: run.runId, tools: [lookup] });
});
afterAll(async () => {
  await mcp?.close();
  await api?.stop();
});

/** A tools/call of the read-only tool, with the headers as given (node:http sends Host as set). */
function lookUp(
  customerId: string,
  headers: { token?: string; host?: string; origin?: string },
): Promise<{ status: number; body: string }> {
  const url = new URL(mcp.url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'lookup_customer', arguments: { customerId } },
  });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          host: headers.host ?? url.host,
          ...(headers.token ? { authorization: `Bearer ${headers.token}` } : {}),
          ...(headers.origin ? { origin: headers.origin } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the MCP server over HTTP: who may call it', () => {
  it('Z6: a bearer that is no runtime key the ledger accepts gets 401 and runs no tool, read-only ones included', async () => {
    const revoked = await makeKey(t.db, [WORKFLOW]);
    await revokeRuntimeKey({ db: t.db, actor: userActor('admin') }, revoked.id, 'leaked');
    const refused = ['x', `elk_${'a'.repeat(12)}_${'b'.repeat(43)}`, revoked.token];
    for (const bearer of refused) {
      const r = await lookUp('c-refused', { token: bearer });
      expect(r.status, bearer).toBe(401);
    }
    expect(looked).not.toContain('c-refused');

    const ok = await lookUp('c-1', { token });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('"plan\\":\\"team\\"');
    expect(looked).toContain('c-1');
  });

  it('Z6: a request naming a host this server does not listen under, or sent by a page of another origin, is refused (403) before its key is asked about', async () => {
    const { port } = new URL(mcp.url);
    const rebound = await lookUp('c-rebound', { token, host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    const page = await lookUp('c-page', { token, origin: 'http://attacker.example' });
    expect(page.status).toBe(403);
    // Refused at the door: a bad key is not even checked (no 401, no failed authentication counted).
    expect((await lookUp('c-rebound', { token: 'x', host: `attacker.example:${port}` })).status).toBe(403);
    expect(looked).not.toContain('c-rebound');
    expect(looked).not.toContain('c-page');

    // The listen address under another of its names, and a page served from the server's own origin.
    const local = await lookUp('c-local', { token, host: `localhost:${port}`, origin: `http://localhost:${port}` });
    expect(local.status).toBe(200);
    expect(looked).toContain('c-local');
  });
});
