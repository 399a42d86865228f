// The SDK as agent teams get it: `npm run sdk:pack` builds the tarball, a scratch project outside the
// repository installs it (offline: its one dependency, yaml, comes from the npm cache the repository's own install filled), and the README's agent runs
// exactly as written, with node, against the API served over real HTTP and the sandbox provider.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW, ensureDemoTool } from '@/lib/demo/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { entryHash, GENESIS_HASH, type ExportedEntry } from '@/lib/sdk/audit/canonical.ts';
import { packSdk, type PackedSdk } from '@/scripts/sdk-pack.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeKey } from './api-support.ts';
import { stripTypes, tsBlockUnder } from '../helpers/doc-examples.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let sandbox: Sandbox;
let token: string;
let scratch: string;
let packed: PackedSdk;
/** The scratch project the tarball is installed into. */
let agentDir: string;

/** Runs a command without blocking this process: the API server answering the agent lives here. */
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

const exampleIn = tsBlockUnder;

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 4);
  sandbox = await startSandbox();
  await ensureDemoTool(t.db);
  token = (await makeKey(t.db, [DEMO_WORKFLOW])).token;
  scratch = mkdtempSync(path.join(tmpdir(), 'effect-ledger-agent-'));
  packed = await packSdk({ outDir: path.join(scratch, 'build'), log: () => {} });
  agentDir = path.join(scratch, 'agent');
  mkdirSync(agentDir);
  writeFileSync(path.join(agentDir, 'package.json'), JSON.stringify({ name: 'agent', private: true, type: 'module' }));
  const install = await run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', packed.tarball],
    agentDir,
  );
  if (install.code !== 0) throw new Error(`npm install of the tarball failed:\n${install.stderr}`);
});
afterAll(async () => {
  await api?.stop();
  await sandbox?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the SDK package', () => {
  it("packs a versioned tarball with ES modules, types, a README and a manifest whose one dependency is yaml (the boundaries' frameworks optional peers) and a bin", () => {
    const root = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; license: string };
    expect(path.basename(packed.tarball)).toBe(`effect-ledger-sdk-${root.version}.tgz`);
    const manifest = JSON.parse(readFileSync(path.join(packed.packageDir, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@effect-ledger/sdk', version: root.version, type: 'module' });
    expect(manifest.license).toBe(root.license);
    expect(manifest.engines.node).toBeTruthy();
    // One dependency: the CLI's apply parses YAML setup files with it.
    expect(manifest.dependencies).toEqual({ yaml: '^2.9.1' });
    expect(manifest.bin).toEqual({ 'effect-ledger': './dist/cli.js' });
    // The framework boundaries' frameworks are optional peers: a team installs only the one it uses.
    const peers = ['ai', '@openai/agents', '@langchain/core', '@modelcontextprotocol/sdk', 'zod'];
    expect(Object.keys(manifest.peerDependencies)).toEqual(peers);
    // Ranges, not the exact versions this repository pins: a project on a newer release installs.
    expect(manifest.peerDependencies).toEqual({
      ai: '^7.0.0',
      '@openai/agents': '^0.20.0',
      '@langchain/core': '^1.4.0',
      '@modelcontextprotocol/sdk': '^1.32.0',
      zod: '^4.1.8',
    });
    expect(Object.values(manifest.peerDependenciesMeta)).toEqual(peers.map(() => ({ optional: true })));
    expect(Object.keys(manifest.exports)).toEqual([
      '.',
      './sandbox',
      './ai',
      './openai-agents',
      './langchain',
      './mcp',
      './audit',
      './package.json',
    ]);
    for (const entry of Object.values(manifest.exports) as ({ types: string; default: string } | string)[])
      if (typeof entry !== 'string')
        for (const file of [entry.types, entry.default]) expect(packed.files).toContain(file.slice(2));
    for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/sandbox.js'])
      expect(packed.files).toContain(file);
    expect(packed.files.filter((f) => !f.startsWith('dist/') && !['package.json', 'README.md'].includes(f))).toEqual(
      [],
    );
  });

  it("K1, S1, R1: the README's ten-line agent, installed from the tarball in a project outside the repository, sends once per customer; run again, it skips", async () => {
    const example = exampleIn(readFileSync('README.md', 'utf8'), '## Wrapping a tool with the SDK');
    // The package's own README and docs/SDK.md show the very same agent.
    const shipped = readFileSync(path.join(agentDir, 'node_modules/@effect-ledger/sdk/README.md'), 'utf8');
    expect(exampleIn(shipped, '## The ten-line agent')).toBe(example);
    expect(exampleIn(readFileSync('docs/SDK.md', 'utf8'), '## Wrapping a tool')).toBe(example);
    // What `npx tsx agent.ts` or Node's own type stripping does: the types go, the code stays.
    writeFileSync(path.join(agentDir, 'agent.mjs'), stripTypes(example));

    const env = { LEDGER_URL: api.url, LEDGER_KEY: token, SANDBOX_URL: sandbox.url };
    const first = await run(process.execPath, ['agent.mjs'], agentDir, env);
    expect(first.code, first.stderr).toBe(0);
    // The second customer is spelled ' CUST-0102 ' by the caller: resolve finds cust-0102.
    expect(first.stdout.trim().split('\n')).toEqual(['cust-0101 done', 'CUST-0102 done']);
    for (const [to, subject] of [
      ['lena@example.com', 'Welcome, Lena!'],
      ['omar@example.com', 'Welcome, Omar!'],
    ] as const) {
      expect(sandbox.deliveriesTo(to).map((d) => d.subject)).toEqual([subject]);
    }
    const effects = await t.db.effect.findMany({
      where: { key: { contains: 'signup-batch-2026-12-01' } },
      orderBy: { key: 'asc' },
    });
    expect(effects.map((e) => [e.state, e.epoch])).toEqual([
      ['done', 1],
      ['done', 1],
    ]);
    expect(effects.map((e) => e.key.split('/')[4])).toEqual(['cust-0101', 'cust-0102']);
    for (const e of effects) {
      const attempts = await t.db.attempt.findMany({ where: { effectId: e.id } });
      expect(attempts).toHaveLength(1);
      // R1: the raw response the outcome carried is stored with the attempt, and holds the receipt.
      expect(attempts[0]!.responseStatus).toBe(201);
      expect(JSON.parse(Buffer.from(attempts[0]!.responseBody!).toString('utf8'))).toMatchObject({ id: e.receipt });
    }

    const second = await run(process.execPath, ['agent.mjs'], agentDir, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim().split('\n')).toEqual(['cust-0101 skipped', 'CUST-0102 skipped']);
    expect(sandbox.deliveriesTo('lena@example.com')).toHaveLength(1);
    expect(sandbox.deliveriesTo('omar@example.com')).toHaveLength(1);
  });

  it('A2: the audit-export verifier ships as @effect-ledger/sdk/audit: it accepts a chain and names the first broken entry of a tampered copy', async () => {
    const entry = (seq: number, prev: string): ExportedEntry => {
      const e: ExportedEntry = {
        id: `entry-${seq}`, version: 2, chain: 'ledger', seq, prev_hash: prev, hash: '',
        at: `2026-12-02T10:00:0${seq}.123456Z`, actor_kind: 'user', actor_id: 'u1', actor_label: 'Ada',
        actor_role: 'operator', action: 'effect.revoke', subject_type: 'effect', subject_id: `k${seq}`,
        run_id: 'run-1', before_state: 'failed', after_state: 'revoked', reason: 'bounced', outcome: 'ok',
        detail: { n: seq, note: 'ü' }, ip: '127.0.0.1', user_agent: null, request_id: null,
      }; // prettier-ignore
      return { ...e, hash: entryHash(e) };
    };
    const first = entry(1, GENESIS_HASH);
    const second = entry(2, first.hash);
    const summary = { export: { format: 'effect-ledger-audit', version: 2, filtered: false, entries: 2,
      chains: { ledger: { first_seq: 1, last_seq: 2, entries: 2 } } } }; // prettier-ignore
    const jsonl = (entries: ExportedEntry[]) => [...entries, summary].map((x) => JSON.stringify(x)).join('\n');
    writeFileSync(path.join(agentDir, 'good.jsonl'), jsonl([first, second]));
    writeFileSync(path.join(agentDir, 'bad.jsonl'), jsonl([first, { ...second, reason: 'changed later' }]));
    writeFileSync(
      path.join(agentDir, 'verify.mjs'),
      `import { readFileSync } from 'node:fs';
import { verifyExport } from '@effect-ledger/sdk/audit';
for (const f of ['good.jsonl', 'bad.jsonl']) console.log(JSON.stringify(verifyExport(readFileSync(f, 'utf8'))));
`,
    );
    const r = await run(process.execPath, ['verify.mjs'], agentDir);
    expect(r.code, r.stderr).toBe(0);
    const [good, bad] = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(good).toMatchObject({ ok: true, entries: 2 });
    expect(bad).toMatchObject({ ok: false, line: 2, id: 'entry-2', seq: 2 });
  });

  it('its types resolve through the package exports for a strict TypeScript consumer without @types/node', async () => {
    const file = path.join(agentDir, 'check.ts');
    writeFileSync(
      file,
      `import { createLedger, defineTool, httpTransport, LedgerApiError, type EffectResult } from '@effect-ledger/sdk';
import { SandboxProvider } from '@effect-ledger/sdk/sandbox';

interface Customer { customerId: string; email: string; subject: string; body: string }
const ledger = createLedger(httpTransport({ baseUrl: 'http://localhost:3000', runtimeKey: 'elk_x', timeoutMs: 5000, retries: 2 }));
const welcome = defineTool<Customer>({ name: 'send_welcome_email', action: 'campaign_welcome', targetType: 'email',
  generated: ['subject', 'body'], resolve: async (c) => ({ record: c.customerId.toLowerCase(), target: c.email }) });
export const send = (runId: string, c: Customer): Promise<EffectResult> => ledger.tool(welcome, runId, c, new SandboxProvider('http://127.0.0.1:4010'));
export const codeOf = (e: unknown): string | null => (e instanceof LedgerApiError ? e.code : null);
// @ts-expect-error a generated input must be one of the tool's arguments
defineTool<Customer>({ name: 'x', action: 'y', targetType: 'email', generated: ['nope'], resolve: (c) => ({ record: c.customerId, target: c.email }) });
// The argument type is inferred from resolve, and generated must name its fields.
const inferred = defineTool({ name: 'x', action: 'y', targetType: 'email', generated: ['subject'], resolve: (c: Customer) => ({ record: c.customerId, target: c.email }) });
export const args: Parameters<typeof inferred.resolve>[0] = { customerId: 'c', email: 'e', subject: 's', body: 'b' };
// @ts-expect-error a field resolve's argument type does not have
defineTool({ name: 'x', action: 'y', targetType: 'email', generated: ['nope'], resolve: (c: Customer) => ({ record: c.customerId, target: c.email }) });
`,
    );
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      // The package's declarations are checked; TypeScript's own lib files are not (they cost seconds).
      skipLibCheck: false,
      skipDefaultLibCheck: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
    expect(program.getSourceFiles().some((f) => f.fileName.endsWith('@effect-ledger/sdk/dist/index.d.ts'))).toBe(true);
  });
});
