// docs/INTEGRATIONS.md as agent teams use it: `npm run sdk:pack` builds the tarball, a scratch project
// outside the repository installs it next to the frameworks the boundaries use (its optional peers),
// and each framework's example runs exactly as written, twice, against the API over real HTTP and the
// sandbox provider: the same result both times, one message per recipient.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW, ensureDemoTool } from '@/lib/demo/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { packSdk } from '@/scripts/sdk-pack.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeKey } from './api-support.ts';
import { DOC_PAGES, stripTypes, tsBlocks, tsBlockUnder, typecheckStrict } from '../helpers/doc-examples.ts';

const DOC = readFileSync('docs/INTEGRATIONS.md', 'utf8');
/** The frameworks an agent's project already has; linked from this repository's node_modules. */
const FRAMEWORKS = ['ai', '@openai/agents', '@langchain/core', '@modelcontextprotocol/sdk', 'zod', '@types/node'];
let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let sandbox: Sandbox;
let token: string;
let scratch: string;
let agentDir: string;

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The example under a heading, as Node runs it once its types are stripped. */
const exampleIn = (heading: string) => stripTypes(tsBlockUnder(DOC, `${heading}\n`));

const env = () => ({ LEDGER_URL: api.url, LEDGER_KEY: token, SANDBOX_URL: sandbox.url });

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 4);
  sandbox = await startSandbox();
  await ensureDemoTool(t.db);
  token = (await makeKey(t.db, [DEMO_WORKFLOW])).token;
  scratch = mkdtempSync(path.join(tmpdir(), 'effect-ledger-integrations-'));
  const packed = await packSdk({ outDir: path.join(scratch, 'build'), log: () => {} });
  agentDir = path.join(scratch, 'agent');
  mkdirSync(agentDir);
  writeFileSync(path.join(agentDir, 'package.json'), JSON.stringify({ name: 'agent', private: true, type: 'module' }));
  const install = await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball],
    agentDir,
  );
  if (install.code !== 0) throw new Error(`npm install of the tarball failed:\n${install.stderr}`);
  for (const name of FRAMEWORKS) {
    mkdirSync(path.dirname(path.join(agentDir, 'node_modules', name)), { recursive: true });
    symlinkSync(path.resolve('node_modules', name), path.join(agentDir, 'node_modules', name), 'dir');
  }
}, 240_000);
afterAll(async () => {
  await api?.stop();
  await sandbox?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('docs/INTEGRATIONS.md', () => {
  it('every TypeScript block of README.md, docs/SDK.md, docs/INTEGRATIONS.md and lib/sdk/README.md typechecks with strict: true against the packed SDK and the frameworks', () => {
    const blocks = DOC_PAGES.flatMap((page) =>
      tsBlocks(readFileSync(page, 'utf8')).map((source, i) => ({
        name: `${page.replace(/[/.]/g, '-')}-${i + 1}`,
        source,
      })),
    );
    // The ten-line agent three times, the conformance file, the four framework examples.
    expect(blocks).toHaveLength(8);
    expect(typecheckStrict(agentDir, blocks)).toEqual([]);
  });

  it.each([
    ['## Vercel AI SDK', 'ai.mjs', 'ines@example.com'],
    ['## OpenAI Agents SDK', 'agents.mjs', 'jun@example.com'],
    ['## LangChain.js', 'langchain.mjs', 'kofi@example.com'],
  ])(
    'K1 S1: the "%s" example, installed from the tarball, sends once; run again, it prints the stored result',
    async (heading, file, email) => {
      writeFileSync(path.join(agentDir, file), exampleIn(heading));
      const first = await run(process.execPath, [file], agentDir, env());
      expect(first.code, first.stderr).toBe(0);
      const [delivery] = sandbox.deliveriesTo(email);
      expect(sandbox.deliveriesTo(email)).toHaveLength(1);
      expect(first.stdout).toContain(
        email === 'kofi@example.com' ? `success ${email}` : `${email} ${delivery!.messageId}`,
      );
      const second = await run(process.execPath, [file], agentDir, env());
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe(first.stdout);
      expect(sandbox.deliveriesTo(email)).toHaveLength(1);
    },
    120_000,
  );

  it('S1: the "MCP server" example, started by the MCP SDK\'s client twice, sends once', async () => {
    writeFileSync(path.join(agentDir, 'mcp-server.mjs'), exampleIn('## MCP server'));
    const call = async (subject: string) => {
      const client = new Client({ name: 'doc-test', version: '1.0.0' });
      const vars = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<
        string,
        string
      >;
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ['mcp-server.mjs'],
          cwd: agentDir,
          env: { ...vars, ...env() },
        }),
      );
      const args = { customerId: 'cust-0204', subject, body: 'Your workspace is ready.' };
      const result = (await client.callTool({ name: 'send_welcome_email', arguments: args })) as CallToolResult;
      await client.close();
      return result;
    };
    const a = await call('Welcome, Lea!');
    const b = await call('Welcome aboard, Lea');
    expect(a.isError).toBeFalsy();
    expect(b.content).toEqual(a.content);
    expect(sandbox.deliveriesTo('lea@example.com').map((d) => d.subject)).toEqual(['Welcome, Lea!']);
  }, 120_000);
});
