// The framework boundaries (lib/sdk/adapters) driven by each framework's own code with a scripted
// model, offline: Vercel AI SDK (generateText + MockLanguageModelV4), OpenAI Agents (Runner + a
// scripted Model), LangChain.js (LangGraph's ReAct agent + a scripted chat model). For each: a real
// child process is killed right after the provider accepted the second of three sends; the resumed
// run calls all three again, one reworded: one delivery per recipient, the second held (never shown
// to the model as a success) and unknown until support resolves it. And reworded text keeps the key.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directTransport } from '@/lib/api/direct-transport.ts';
import { ProviderRegistry } from '@/lib/providers/registry.ts';
import { SandboxProvider, startSandbox, type Sandbox } from '@/lib/providers/sandbox/index.ts';
import { reconcileOnce } from '@/lib/replay/reconcile.ts';
import { guardCall } from '@/lib/sdk/adapters/guard.ts';
import { createLedger, ProviderRejected, type Ledger } from '@/lib/sdk/index.ts';
import { startApiServer } from '@/scripts/bench/sdk-http-server.ts';
import { welcomeDefinition, type Welcome } from '../helpers/adapter-agents/team-tool.ts';
import { FRAMEWORKS, runAgent, type Framework } from '../helpers/adapter-agents/runners.ts';
import type { RunReport } from '../helpers/adapter-agents/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor } from '../helpers/factories.ts';
import { makeKey } from './api-support.ts';
import { until } from './replay-fixtures.ts';

let t: TestDatabase;
let api: { url: string; stop(): Promise<void> };
let sandbox: Sandbox;
const WORKFLOW = 'wf_adapters';
let token: string;

beforeAll(async () => {
  t = await createTestDatabase();
  api = await startApiServer(t.appUrl, 4);
  sandbox = await startSandbox();
  token = (await makeKey(t.db, [WORKFLOW])).token;
});
afterAll(async () => {
  await api?.stop();
  await sandbox?.stop();
});

const customer = (n: number, fw: string, subject = 'Welcome aboard'): Welcome => ({
  customerId: `cust-${fw}-${n}`,
  email: `c${n}.${fw}@example.com`,
  subject,
  body: 'Your workspace is ready.',
});

function child(fw: Framework, toolName: string, runId: string, calls: Welcome[], crashAfter?: string) {
  const env: Record<string, string> = {
    FRAMEWORK: fw,
    LEDGER_URL: api.url,
    LEDGER_KEY: token,
    SANDBOX_URL: sandbox.url,
    TOOL_NAME: toolName,
    RUN_ID: runId,
    CALLS: JSON.stringify(calls),
    ...(crashAfter ? { CRASH_AFTER: crashAfter } : {}),
  };
  return new Promise<{ signal: NodeJS.Signals | null; code: number | null; report: RunReport | null; stderr: string }>(
    (resolve, reject) => {
      const p = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/adapter-agents/child.ts'], {
        env: { ...process.env, ...env },
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      p.on('error', reject);
      p.on('close', (code, signal) =>
        resolve({ code, signal, stderr, report: stdout.trim() ? (JSON.parse(stdout.trim()) as RunReport) : null }),
      );
    },
  );
}

async function setUp() {
  const tool = await makeTool(t.db, { leaseSeconds: 2 });
  // No settle wait for the reconciler: the lease's end is what this test waits for.
  await t.owner('UPDATE tool_definition SET settle_window_seconds = 0 WHERE name = $1', [tool.name]);
  const run = await makeRun(t.db, WORKFLOW);
  const ledger: Ledger = createLedger(directTransport({ db: t.db, actor: runtimeActor([WORKFLOW]) }));
  const definition = welcomeDefinition(tool.name);
  return { tool, run, ledger, definition };
}

describe.each(Object.keys(FRAMEWORKS) as Framework[])('the %s boundary', (fw) => {
  it(
    "S1 C2 K1: killed after the provider accepted the 2nd of 3, resumed with a reworded call: one delivery each, the 2nd held, then settled by the provider's lookup by idempotency key",
    { timeout: 180_000 },
    async () => {
      const { tool, run, ledger, definition } = await setUp();
      const [a, b, c] = [customer(1, fw), customer(2, fw), customer(3, fw)];
      const crashed = await child(fw, tool.name, run.runId, [a, b, c], b.email);
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      expect([a, b, c].map((x) => sandbox.deliveriesTo(x.email).length)).toEqual([1, 1, 0]);

      const reworded = { ...b, subject: 'A warm welcome to you', body: 'We rewrote this.' };
      const resumed = await child(fw, tool.name, run.runId, [a, reworded, c]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const seen = resumed.report!.seen;
      expect(seen.map((s) => [s.to, s.ok])).toEqual([
        [a.email, true],
        [b.email, false],
        [c.email, true],
      ]);
      // The first recipient's result is the stored one: the receipt of its only delivery.
      expect(seen[0]!.text).toContain(sandbox.deliveriesTo(a.email)[0]!.messageId);
      expect(seen[1]!.text).toContain('effect_held');
      expect(resumed.report!.holds.map((h) => h.state)).toEqual(['pending']);
      expect([a, b, c].map((x) => sandbox.deliveriesTo(x.email).length)).toEqual([1, 1, 1]);

      // The dead run's lease runs out. No receipt was stored, but the sandbox finds the message sent
      // with the key's idempotency key: the reconciler completes it with that receipt, nobody has to.
      const keyB = resumed.report!.holds[0]!.key;
      await until('the lease of the killed call to expire', async () => {
        const { rows } = await t.owner<{ expired: boolean }>(
          'SELECT lease_expires_at < now() AS expired FROM effect WHERE key = $1',
          [keyB],
        );
        return rows[0]?.expired;
      });
      const providers = new ProviderRegistry({}, {}, { sandbox: new SandboxProvider(sandbox.url) });
      await reconcileOnce({ db: t.db, providers });
      const receipt = sandbox.deliveriesTo(b.email)[0]!.messageId;
      const settled = await ledger.readEffect(keyB);
      expect(settled.state).toBe('done');
      expect(settled.receipt).toBe(receipt);
      const guard = { ledger, definition, run: run.runId };
      const again = await runAgent(fw, { guard, provider: new SandboxProvider(sandbox.url), calls: [reworded] });
      expect(again.seen.map((s) => s.ok)).toEqual([true]);
      expect(again.holds).toEqual([]);
      expect([a, b, c].map((x) => sandbox.deliveriesTo(x.email).length)).toEqual([1, 1, 1]);
    },
  );

  it('K1 K4: a call that changes only generated text is the same key: the stored result, no second send', async () => {
    const { run, ledger, definition } = await setUp();
    const first = customer(9, fw, 'Hello!');
    const second = { ...first, subject: 'Hi there, welcome', body: 'Completely different words.' };
    const report = await runAgent(fw, {
      guard: { ledger, definition, run: run.runId },
      provider: new SandboxProvider(sandbox.url),
      calls: [first, second],
    });
    expect(report.seen.map((s) => s.ok)).toEqual([true, true]);
    expect(report.seen[1]!.text).toBe(report.seen[0]!.text);
    expect(sandbox.deliveriesTo(first.email).map((d) => d.subject)).toEqual(['Hello!']);
    const { rows } = await t.owner<{ key: string }>('SELECT key FROM effect_key WHERE record_id = $1', [
      first.customerId,
    ]);
    expect(rows).toHaveLength(1);
  });
});

describe('the guard every boundary shares', () => {
  it("S3 S4: a provider refusal is the tool's own error and frees the key; a result without a receipt is held as unknown", async () => {
    const { run, ledger, definition } = await setUp();
    const guard = { ledger, definition, run: run.runId };
    const refused = customer(6, 'guard');
    const error = await guardCall(guard, refused, () => {
      throw new ProviderRejected('recipient refused', { status: 422 });
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderRejected);
    // The key is free again (S3): the next call runs the tool.
    expect(await guardCall(guard, refused, () => ({ id: 'msg-after-refusal' }))).toMatchObject({ kind: 'ran' });

    const silent = customer(7, 'guard');
    const held = await guardCall(guard, silent, () => ({ ok: true }));
    expect(held).toMatchObject({ kind: 'held', hold: { state: 'unknown', tool: definition.name } });
    let ranAgain = false;
    const again = await guardCall(guard, silent, () => (ranAgain = true));
    expect(again).toMatchObject({ kind: 'held', hold: { state: 'unknown' } });
    expect(ranAgain).toBe(false);
  });
});

describe('what a tool returned', () => {
  it('R3 S6: a result that waits for a completion call, or says the object already existed, is never recorded done: held, unless the provider follows the reference to a delivered object', async () => {
    const { run, ledger, definition } = await setUp();
    const guard = { ledger, definition, run: run.runId };
    const waiting = await guardCall(guard, customer(8, 'guard'), () => ({
      id: 'msg-8',
      status: 'awaiting_completion',
      completionToken: 'tok-8',
    }));
    expect(waiting).toMatchObject({ kind: 'held', hold: { state: 'unknown' } });
    const existed = await guardCall(guard, customer(9, 'guard'), () => ({ id: 'msg-prior-9', already_existed: true }));
    expect(existed).toMatchObject({ kind: 'held', hold: { state: 'unknown' } });

    const raw = { status: 200, headers: [], body: new Uint8Array() };
    const priorFailed = {
      followReference: async () => ({ found: true as const, receipt: 'msg-prior-10', state: 'failed' as const, raw }),
    };
    const stuck = await guardCall({ ...guard, provider: priorFailed }, customer(10, 'guard'), () => ({
      id: 'msg-prior-10',
      already_existed: true,
    }));
    expect(stuck).toMatchObject({ kind: 'held', hold: { state: 'stuck' } });
    const priorDelivered = {
      followReference: async (reference: string) => ({
        found: true as const,
        receipt: reference,
        state: 'delivered' as const,
        raw,
      }),
    };
    const followed = await guardCall({ ...guard, provider: priorDelivered }, customer(11, 'guard'), () => ({
      id: 'msg-prior-11',
      alreadyExisted: true,
    }));
    expect(followed).toMatchObject({ kind: 'ran', receipt: 'msg-prior-11' });

    // A tool's own reading of its result wins over the default.
    const refusedBody = await guardCall(
      { ...guard, classify: () => ({ outcome: 'failed', evidence: { status: 422 } }) },
      customer(12, 'guard'),
      () => ({ id: 'err-12', error: 'mailbox unavailable' }),
    ).catch((e: unknown) => e);
    expect(String(refusedBody)).toMatch(/the effect failed/);
    expect(await guardCall(guard, customer(12, 'guard'), () => ({ id: 'msg-12' }))).toMatchObject({ kind: 'ran' });
  });
});

describe('read-only tools', () => {
  it('pass through untouched: no claim, no key, the tool runs on every call', async () => {
    const { ledger, definition } = await setUp();
    let runs = 0;
    const before = await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM effect_key');
    for (let i = 0; i < 2; i++) {
      const r = await guardCall(
        { ledger, definition, run: 'not-a-run', readOnly: true },
        customer(5, 'ro'),
        () => ++runs,
      );
      expect(r).toMatchObject({ kind: 'ran', value: i + 1, key: null });
    }
    expect((await t.owner<{ n: number }>('SELECT count(*)::int AS n FROM effect_key')).rows).toEqual(before.rows);
  });
});
