// The Python client (lib/sdk/python, standard library only) tested with Debian's python3 and its own
// unittest against the agent API served over real HTTP, with the sandbox provider: effects, a killed
// agent and a reworded rerun, retries with the same Idempotency-Key, typed errors.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_WORKFLOW, ensureDemoTool } from '@/lib/demo/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeTool } from '../helpers/factories.ts';
import { makeKey } from './api-support.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 8);
  sandbox = await startSandbox();
});

afterAll(async () => {
  await api?.stop();
  await sandbox?.stop();
});

function python(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('python3', args, { env: { ...process.env, ...env }, cwd: process.cwd() });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

describe('the Python client', () => {
  it('S1 S4 K1 Z5 Z6 R1: python3 -m unittest passes against a running ledger; no recipient gets two messages', async () => {
    const workflow = 'wf_python';
    const tool = await makeTool(t.db);
    const { token } = await createRuntimeKey(
      { db: t.db, actor: { kind: 'system', id: 'test', label: 'test' } },
      { name: 'python-client', workflows: [workflow] },
    );
    const root = process.cwd();
    const { code, output } = await python(['-m', 'unittest', '-v', 'test_effect_ledger'], {
      PYTHONPATH: [path.join(root, 'lib/sdk/python'), path.join(root, 'tests/python')].join(path.delimiter),
      LEDGER_URL: api.url,
      LEDGER_KEY: token,
      SANDBOX_URL: sandbox.url,
      LEDGER_TOOL: tool.name,
      LEDGER_WORKFLOW: workflow,
    });
    expect(output).toMatch(/Ran 10 tests/);
    expect(code, output).toBe(0);
    const perTarget = new Map<string, number>();
    for (const d of sandbox.deliveries) perTarget.set(d.to, (perTarget.get(d.to) ?? 0) + 1);
    expect([...perTarget.values()].every((n) => n === 1)).toBe(true);
    const { rows } = await t.owner<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM effect GROUP BY state ORDER BY state`,
    );
    // Done effects are exactly the deliveries whose sender lived to report them: all but the killed
    // agent's second send and the one whose report a proxy refused.
    expect(rows.find((r) => r.state === 'pending')?.n).toBe(2);
    expect(rows.find((r) => r.state === 'done')?.n).toBe(sandbox.deliveries.length - 2);
  });

  it('K1 S1: the Python example of docs/SDK.md runs as written: done, then skipped, one message', async () => {
    const doc = readFileSync('docs/SDK.md', 'utf8');
    const example = /```python\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Python client')))![1]!;
    await ensureDemoTool(t.db);
    const { token } = await makeKey(t.db, [DEMO_WORKFLOW]);
    const dir = mkdtempSync(path.join(tmpdir(), 'effect-ledger-python-doc-'));
    try {
      writeFileSync(path.join(dir, 'agent.py'), example);
      const env = {
        PYTHONPATH: path.join(process.cwd(), 'lib/sdk/python'),
        LEDGER_URL: api.url,
        LEDGER_KEY: token,
        SANDBOX_URL: sandbox.url,
      };
      const first = await python([path.join(dir, 'agent.py')], env);
      expect(first.output.trim()).toBe('done');
      expect(first.code).toBe(0);
      const second = await python([path.join(dir, 'agent.py')], env);
      expect(second.output.trim()).toBe('skipped');
      expect(sandbox.deliveries.filter((d) => d.to === 'ana@example.com')).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
