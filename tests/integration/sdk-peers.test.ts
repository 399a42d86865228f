// The SDK's peer ranges (scripts/sdk-pack.ts) hold at both ends: the packed tarball is installed
// from the npm registry in a scratch project next to the oldest release each range allows, and in
// another next to the newest, and a small example using every boundary typechecks with strict: true
// and runs (read-only tools: each framework's own call path, no ledger needed). One install per end
// keeps it small; npm's cache makes a second run fast.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packSdk, PEER_RANGES, type PackedSdk } from '@/scripts/sdk-pack.ts';
import { stripTypes, typecheckStrict } from '../helpers/doc-examples.ts';

let scratch: string;
let packed: PackedSdk;

function run(command: string, args: string[], cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const numeric = (v: string) => v.split('.').map(Number);
function compareVersions(a: string, b: string): number {
  const [x, y] = [numeric(a), numeric(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** The releases (no prereleases) the registry has in a range, oldest first. */
async function releasesIn(name: string, range: string, cwd: string): Promise<string[]> {
  const r = await run('npm', ['view', `${name}@${range}`, 'version', '--json'], cwd);
  if (r.code !== 0) throw new Error(`npm view ${name}@${range} failed:\n${r.stderr}`);
  const parsed = JSON.parse(r.stdout) as string | string[];
  return (Array.isArray(parsed) ? parsed : [parsed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v)).sort(compareVersions);
}

const EXAMPLE = `import { tool } from 'ai';
import { RunContext, tool as agentsTool } from '@openai/agents';
import { tool as langchainTool } from '@langchain/core/tools';
import { z } from 'zod';
import { createLedger, defineTool, httpTransport } from '@effect-ledger/sdk';
import { ledgered } from '@effect-ledger/sdk/ai';
import { ledgeredTool } from '@effect-ledger/sdk/openai-agents';
import { ledgered as ledgeredLangchain } from '@effect-ledger/sdk/langchain';
import { createLedgerMcpServer, defineMcpTool } from '@effect-ledger/sdk/mcp';

// Read-only tools run without a claim: nothing here reaches the (absent) ledger.
const ledger = createLedger(httpTransport({ baseUrl: 'http://127.0.0.1:9', runtimeKey: process.env.NO_LEDGER_KEY ?? 'elk_x_y' }));
interface Lookup { customerId: string }
const lookup = defineTool({ name: 'lookup_customer', action: 'lookup', targetType: 'email', generated: [],
  resolve: ({ customerId }: Lookup) => ({ record: customerId, target: 'x@example.com' }) });
const guard = { ledger, definition: lookup, run: 'run-1', readOnly: true };
const schema = z.object({ customerId: z.string() });
const answer = async ({ customerId }: Lookup) => ({ customerId, plan: 'team' });

const ai = ledgered(tool({ description: 'Look a customer up', inputSchema: schema, execute: answer }), guard);
const a = await ai.execute({ customerId: 'c-1' }, { toolCallId: 'call-1', messages: [], context: {} });
const agents = ledgeredTool({ name: 'lookup_customer', description: 'Look a customer up', parameters: schema, execute: answer }, guard);
const b = await agents.invoke(new RunContext(), JSON.stringify({ customerId: 'c-2' }));
const langchain = ledgeredLangchain(langchainTool(answer, { name: 'lookup_customer', description: 'Look a customer up', schema }), guard);
const c = await langchain.invoke({ customerId: 'c-3' });
createLedgerMcpServer({ ledger, run: 'run-1', tools: [defineMcpTool({ definition: lookup, description: 'Look a customer up',
  inputSchema: schema, execute: answer, readOnly: true })] });
const typed: Array<{ customerId: string; plan: string }> = [a, typeof b === 'string' ? JSON.parse(b) : b];
console.log(JSON.stringify([...typed, c]));
void agentsTool;
`;

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), 'effect-ledger-peers-'));
  packed = await packSdk({ outDir: path.join(scratch, 'build'), log: () => {} });
}, 240_000);
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the SDK with each framework at both ends of its peer range', () => {
  it.each(['oldest', 'newest'] as const)(
    'installs from the tarball next to the %s release of every peer without a resolution error; the example typechecks with strict: true and runs',
    async (end) => {
      const dir = path.join(scratch, end);
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, 'package.json'),
        JSON.stringify({ name: `peers-${end}`, private: true, type: 'module' }),
      );
      const versions: Record<string, string> = {};
      for (const [name, range] of Object.entries(PEER_RANGES)) {
        const releases = await releasesIn(name, range, dir);
        versions[name] = end === 'oldest' ? releases[0]! : releases.at(-1)!;
      }
      const specs = Object.entries(versions).map(([name, version]) => `${name}@${version}`);
      // No --legacy-peer-deps: a peer range that excluded one of these releases would fail here (ERESOLVE).
      const install = await run(
        'npm',
        ['install', '--no-audit', '--ignore-scripts', '--prefer-offline', packed.tarball, ...specs],
        dir,
      );
      expect(install.code, `${specs.join(' ')}\n${install.stderr}`).toBe(0);
      // Node's types come with the project (a framework may have installed its own copy already).
      if (!existsSync(path.join(dir, 'node_modules/@types/node'))) {
        mkdirSync(path.join(dir, 'node_modules/@types'), { recursive: true });
        symlinkSync(path.resolve('node_modules/@types/node'), path.join(dir, 'node_modules/@types/node'), 'dir');
      }

      expect(typecheckStrict(dir, [{ name: 'example', source: EXAMPLE }]), specs.join(' ')).toEqual([]);
      writeFileSync(path.join(dir, 'example.mjs'), stripTypes(EXAMPLE));
      const ran = await run(process.execPath, ['example.mjs'], dir);
      expect(ran.code, ran.stderr).toBe(0);
      expect(JSON.parse(ran.stdout)).toEqual([
        { customerId: 'c-1', plan: 'team' },
        { customerId: 'c-2', plan: 'team' },
        { customerId: 'c-3', plan: 'team' },
      ]);
    },
    300_000,
  );
});
