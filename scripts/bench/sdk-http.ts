// End-to-end effects per second: agents using the SDK's HTTP transport against the agent API served
// over real HTTP (sdk-http-server.ts, its own process), sending through the sandbox provider. Each
// effect is a claim, the provider call, the raw response and the outcome report, as in production.
// Then the same run is replayed with reworded subjects: every effect must be skipped (K1, S1).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDb } from '../../lib/db/client.ts';
import { createRuntimeKey } from '../../lib/runtime-keys/index.ts';
import { createLedger, defineTool, httpTransport } from '../../lib/sdk/index.ts';
import { SandboxProvider, startSandbox } from '../../lib/providers/sandbox/index.ts';
import { closedLoop, type LoadResult } from './harness.ts';
import { startApiServer } from './sdk-http-server.ts';

export interface SdkHttpBench {
  effects: number;
  agents: number;
  send: LoadResult;
  /** Replaying every effect with a reworded subject: all must skip without a provider call. */
  replay: LoadResult;
  /** Sandbox deliveries after the send and after the replay: both must equal `effects`. */
  deliveries: { afterSend: number; afterReplay: number; distinctTargets: number };
  /** Effects in state done for the run: must equal `effects`. */
  done: number;
  server: 'child process' | 'in process';
}

interface Customer {
  customerId: string;
  email: string;
  subject: string;
  body: string;
}

async function spawnApiServer(appUrl: string, connections: number): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./sdk-http-server.ts', import.meta.url)), appUrl, String(connections)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`API server exited with ${code}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

export async function benchSdkHttp(opts: { ownerUrl: string; appUrl: string; effects: number; agents: number; inProcess?: boolean }): Promise<SdkHttpBench> {
  const { effects, agents } = opts;
  const db = createDb(opts.appUrl, 2);
  const sandbox = await startSandbox();
  const api = opts.inProcess ? await startApiServer(opts.appUrl, agents) : await spawnApiServer(opts.appUrl, agents);
  try {
    const tag = Date.now().toString(36);
    const workflow = `bench_sdk_${tag}`;
    const system = { kind: 'system', id: 'bench', label: 'bench setup' } as const;
    const { token } = await createRuntimeKey({ db, actor: system }, { name: `bench-sdk-${tag}`, workflows: [workflow] });
    const toolRow = await db.toolDefinition.create({
      data: { name: `bench_welcome_${tag}`, actions: ['campaign_welcome'], targetType: 'email', provider: 'sandbox', generatedInputs: ['subject', 'body'], supportsIdempotencyKey: true, supportsReceiptLookup: true },
    });
    const provider = new SandboxProvider(sandbox.url);
    const ledger = createLedger(httpTransport({ baseUrl: api.url, runtimeKey: token }));
    const welcome = defineTool<Customer>({ name: toolRow.name, action: 'campaign_welcome', targetType: 'email', generated: ['subject', 'body'], identity: (a) => ({ record: a.customerId, target: a.email }) });
    const { runId } = await ledger.createRun({ workflow, triggerId: `evt-${tag}` });
    const customer = (i: number, subject: string): Customer => ({ customerId: `cust-${i}`, email: `bench${i}@example.com`, subject, body: `Hello ${i}` });
    const sendOne = (c: Customer) =>
      ledger.tool(welcome, runId, c, ({ idempotencyKey, key, epoch, signal, args }) =>
        provider.send({ key, epoch, idempotencyKey, target: args.email, payload: { subject: args.subject, body: args.body } }, signal), { provider });

    console.log(`[bench] sdk over http: ${effects} effects, ${agents} agents at once`);
    const send = await closedLoop(effects, agents, async (i) => {
      const r = await sendOne(customer(i, 'Welcome aboard'));
      if (r.status !== 'done') throw new Error(`effect ${i} ended ${r.status}`);
    });
    const afterSend = sandbox.deliveries.length;
    const replay = await closedLoop(effects, agents, async (i) => {
      const r = await sendOne(customer(i, 'Welcome aboard, again (reworded on replay)'));
      if (r.status !== 'skipped') throw new Error(`replayed effect ${i} was not skipped: ${r.status}`);
    });
    const owner = new pg.Client({ connectionString: opts.ownerUrl });
    await owner.connect();
    const done = Number((await owner.query<{ n: string }>(`SELECT count(*) AS n FROM effect WHERE run_id = $1 AND state = 'done'`, [runId])).rows[0]!.n);
    await owner.end();
    return {
      effects,
      agents,
      send,
      replay,
      deliveries: { afterSend, afterReplay: sandbox.deliveries.length, distinctTargets: new Set(sandbox.deliveries.map((d) => d.to)).size },
      done,
      server: opts.inProcess ? 'in process' : 'child process',
    };
  } finally {
    await api.stop();
    await sandbox.stop();
    await db.$disconnect();
  }
}
