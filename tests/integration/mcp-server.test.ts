// The ledgered MCP server (lib/sdk/mcp) tested with the MCP SDK's own client, over stdio and over
// Streamable HTTP, against the agent API over real HTTP and the sandbox provider: the server process
// restarts between two identical calls (the second reworded) and the recipient gets one message.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import type { Welcome } from '../helpers/adapter-agents/team-tool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool } from '../helpers/factories.ts';
import { makeKey } from './api-support.ts';

const WORKFLOW = 'wf_mcp';
const CHILD = ['--import', 'tsx', 'tests/helpers/adapter-agents/mcp-child.ts'];
let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let sandbox: Sandbox;
let token: string;
let toolName: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 4);
  sandbox = await startSandbox();
  token = (await makeKey(t.db, [WORKFLOW])).token;
  toolName = (await makeTool(t.db)).name;
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await api?.stop();
  await sandbox?.stop();
});

const envFor = (runId: string): Record<string, string> => ({
  ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>),
  LEDGER_URL: api.url,
  SANDBOX_URL: sandbox.url,
  TOOL_NAME: toolName,
  RUN_ID: runId,
});
const customer = (n: number, subject: string): Welcome => ({
  customerId: `cust-mcp-${n}`,
  email: `mcp${n}@example.com`,
  subject,
  body: 'Your workspace is ready.',
});
const payload = (r: CallToolResult) => JSON.parse((r.content[0] as { text: string }).text) as Record<string, unknown>;

async function stdioClient(runId: string) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: CHILD, env: { ...envFor(runId), LEDGER_KEY: token } }),
  );
  return client;
}

async function httpServer(runId: string): Promise<{ url: string; child: ChildProcess }> {
  const child: ChildProcess = spawn(process.execPath, [...CHILD, 'http'], {
    env: { ...process.env, ...envFor(runId) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code: number | null) => reject(new Error(`the MCP server exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

async function httpClient(url: string) {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

describe('the ledgered MCP server', () => {
  it(
    'S1 K1 over stdio: lists the tools and get_effect; a restart between two identical calls sends once',
    { timeout: 120_000 },
    async () => {
      const run = await makeRun(t.db, WORKFLOW);
      const first = await stdioClient(run.runId);
      const names = (await first.listTools()).tools.map((x) => x.name).sort();
      expect(names).toEqual(['get_effect', 'lookup_customer', toolName].sort());
      const a = (await first.callTool({ name: toolName, arguments: customer(1, 'Welcome!') })) as CallToolResult;
      expect(a.isError).toBeFalsy();
      await first.close(); // ends the server process

      const second = await stdioClient(run.runId);
      const b = (await second.callTool({
        name: toolName,
        arguments: customer(1, 'Reworded welcome'),
      })) as CallToolResult;
      expect(b.isError).toBeFalsy();
      expect(payload(b)).toEqual(payload(a));
      expect(sandbox.deliveriesTo('mcp1@example.com').map((d) => d.subject)).toEqual(['Welcome!']);
      const effect = (await second.callTool({
        name: 'get_effect',
        arguments: { tool: toolName, arguments: customer(1, 'any text') },
      })) as CallToolResult;
      expect(payload(effect)).toMatchObject({ state: 'done', epoch: 1, receipt: payload(a).id });
      const lookup = (await second.callTool({
        name: 'lookup_customer',
        arguments: { customerId: 'c-1' },
      })) as CallToolResult;
      expect(payload(lookup)).toEqual({ customerId: 'c-1', plan: 'team' });
      await second.close();
    },
  );

  it(
    'S1 Z6 over Streamable HTTP: the runtime key is the bearer token; a killed and restarted server sends once',
    { timeout: 120_000 },
    async () => {
      const run = await makeRun(t.db, WORKFLOW);
      const one = await httpServer(run.runId);
      const noKey = await fetch(one.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(noKey.status).toBe(401);
      const c1 = await httpClient(one.url);
      const a = (await c1.callTool({ name: toolName, arguments: customer(2, 'Hello') })) as CallToolResult;
      expect(a.isError).toBeFalsy();
      one.child.kill('SIGKILL');

      const two = await httpServer(run.runId);
      const c2 = await httpClient(two.url);
      const b = (await c2.callTool({
        name: toolName,
        arguments: customer(2, 'Hello again, reworded'),
      })) as CallToolResult;
      expect(payload(b)).toEqual(payload(a));
      expect(sandbox.deliveriesTo('mcp2@example.com')).toHaveLength(1);
      await c2.close();
      two.child.kill('SIGKILL');
    },
  );

  it(
    'a stdio server that cannot start (a key the ledger refuses, a ledger nobody answers at) tells the MCP client why, as an MCP error, instead of closing the connection',
    { timeout: 120_000 },
    async () => {
      const run = await makeRun(t.db, WORKFLOW);
      const connect = async (env: Record<string, string>) => {
        const client = new Client({ name: 'test', version: '1.0.0' });
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: CHILD,
          env: { ...envFor(run.runId), ...env },
          stderr: 'pipe',
        });
        const error = await client.connect(transport).then(
          () => null,
          (e: unknown) => e as Error,
        );
        await client.close();
        return error;
      };
      const badKey = await connect({ LEDGER_KEY: `elk_zzzzzzzzzzzz_${'D'.repeat(43)}` });
      expect(badKey).toBeInstanceOf(McpError);
      expect(badKey!.message).not.toContain('Connection closed');
      expect(badKey!.message).toContain('could not start: the ledger did not accept the runtime key (LEDGER_KEY)');
      expect(badKey!.message).toContain('unknown key or wrong secret');

      const unreachable = await connect({ LEDGER_KEY: token, LEDGER_URL: 'http://127.0.0.1:9' });
      expect(unreachable).toBeInstanceOf(McpError);
      expect(unreachable!.message).toContain('could not start: the ledger could not be reached (network)');
    },
  );
});
