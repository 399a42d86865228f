// End-to-end effects per second: agents using the SDK's HTTP transport against the agent API served
// over real HTTP, sending through the sandbox provider. The server is the production server
// (production-server.ts) when the project has a `.next` build newer than its sources, else (a clean
// clone) sdk-http-server.ts in its own process: the same route handlers behind a plain node:http
// server. BENCH_SDK_SERVER forces one. Each effect is a claim, the provider call and the outcome report
// with the raw response, as in production.
// Then the same run is replayed with reworded subjects: every effect must be skipped (K1, S1).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDb } from '@/lib/db/client.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { createLedger, defineTool, httpTransport } from '@/lib/sdk/index.ts';
import { SandboxProvider, startSandbox } from '@/lib/providers/sandbox/index.ts';
import { floorAgent, sideBySide, startFloor, type SideBySide } from './agent-path.ts';
import { closedLoop } from './harness.ts';
import { cpuMeter, postmasterOf, procAvailable } from './proc-cpu.ts';
import { summarize, type ProfileShare } from './profile-summary.ts';

/** Alternating rounds per side (product, floor); each side's figure is the median round. */
const ROUNDS = 3;
import { startApiServer } from './sdk-http-server.ts';
import { startProductionServer } from './production-server.ts';
import { nextBuildIsFresh } from '../support/next-build.ts';

export interface SdkHttpBench {
  effects: number;
  agents: number;
  /** The product's sends against the floor's, alternating rounds, medians. */
  send: SideBySide;
  /** Replaying every effect with a reworded subject (all must skip without a provider call), against
   *  the floor's losing claim. */
  replay: SideBySide;
  /** Sandbox deliveries after the send and after the replay: both must equal `effects`. */
  deliveries: { afterSend: number; afterReplay: number; distinctTargets: number };
  /** Effects in state done for the run: must equal `effects`. */
  done: number;
  server: ServerKind;
  /** With BENCH_SDK_PROFILE: where the API server's time went during the replay (server-probe.ts). */
  replayProfile?: ReplayProfile;
}

export interface ReplayProfile {
  /** The statement table the server wrote (Markdown). */
  statements: string;
  /** Sampled CPU time of the server process, and its split by place. */
  totalMs: number;
  byPlace: ProfileShare[];
}

/** The replay phase's files, once the server has written them (it does when it stops). */
function readReplayProfile(): ReplayProfile | undefined {
  const dir = process.env.BENCH_SDK_PROFILE;
  if (!dir || !existsSync(path.join(dir, 'replay.cpuprofile'))) return undefined;
  const profile = JSON.parse(readFileSync(path.join(dir, 'replay.cpuprofile'), 'utf8')) as Parameters<
    typeof summarize
  >[0];
  const { total, byPlace } = summarize(profile, 10);
  return { statements: readFileSync(path.join(dir, 'replay-statements.md'), 'utf8'), totalMs: total, byPlace };
}

/** The production server (web-server.ts) on the project's own build; a node:http server over the
 *  route handlers in a child process (a clean clone has no build); or that server inside this
 *  process (the reduced test). */
export type ServerKind = 'production server' | 'child process' | 'in process';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

interface Customer {
  customerId: string;
  email: string;
  subject: string;
  body: string;
}

interface ApiServer {
  url: string;
  /** Its process, when it has its own (CPU per effect). */
  pid?: number;
  /** Marks the start of a bench phase (profiled by the child process server only). */
  phase?(name: string): void;
  stop(): Promise<void>;
}

async function spawnApiServer(appUrl: string, connections: number): Promise<ApiServer> {
  // BENCH_SDK_PROFILE=<dir>: the server writes a CPU profile and its statement times per phase there
  // (server-probe.ts: where the time went).
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./sdk-http-server.ts', import.meta.url)), appUrl, String(connections)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`API server exited with ${code}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  return {
    url,
    pid: child.pid!,
    phase: (name: string) => {
      child.stdin!.write(`phase ${name}\n`);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

export async function benchSdkHttp(opts: {
  ownerUrl: string;
  appUrl: string;
  effects: number;
  agents: number;
  server?: ServerKind;
}): Promise<SdkHttpBench> {
  const { effects, agents } = opts;
  const server: ServerKind = opts.server ?? (nextBuildIsFresh(root) ? 'production server' : 'child process');
  const db = createDb(opts.appUrl, 2);
  const sandbox = await startSandbox();
  const api: ApiServer =
    server === 'in process'
      ? await startApiServer(opts.appUrl, agents)
      : server === 'production server'
        ? await startProductionServer(opts.appUrl)
        : await spawnApiServer(opts.appUrl, agents);
  // The floor makes its own table, which the app role may not: it connects as the owner.
  const floorServer = await startFloor(opts.ownerUrl, agents);
  let result: SdkHttpBench;
  try {
    const tag = Date.now().toString(36);
    const workflow = `bench_sdk_${tag}`;
    const system = { kind: 'system', id: 'bench', label: 'bench setup' } as const;
    const { token } = await createRuntimeKey(
      { db, actor: system },
      { name: `bench-sdk-${tag}`, workflows: [workflow] },
    );
    const toolRow = await db.toolDefinition.create({
      data: {
        name: `bench_welcome_${tag}`,
        actions: ['campaign_welcome'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: ['subject', 'body'],
        supportsIdempotencyKey: true,
        supportsReceiptLookup: true,
      },
    });
    const provider = new SandboxProvider(sandbox.url);
    const ledger = createLedger(httpTransport({ baseUrl: api.url, runtimeKey: token }));
    const welcome = defineTool<Customer>({
      name: toolRow.name,
      action: 'campaign_welcome',
      targetType: 'email',
      generated: ['subject', 'body'],
      identity: (a) => ({ record: a.customerId, target: a.email }),
    });
    const { runId } = await ledger.createRun({ workflow, triggerId: `evt-${tag}` });
    const customer = (i: number, subject: string): Customer => ({
      customerId: `cust-${i}`,
      email: `bench${i}@example.com`,
      subject,
      body: `Hello ${i}`,
    });
    const sendOne = (c: Customer) =>
      ledger.tool(
        welcome,
        runId,
        c,
        ({ idempotencyKey, key, epoch, signal, args }) =>
          provider.send(
            { key, epoch, idempotencyKey, target: args.email, payload: { subject: args.subject, body: args.body } },
            signal,
          ),
        { provider },
      );

    // Warm both servers (JIT, connection pools, plan caches) before measuring.
    const warm = Math.min(100, Math.ceil(effects / 10));
    const warmRun = await ledger.createRun({ workflow, triggerId: `evt-warm-${tag}` });
    await closedLoop(warm, agents, (i) =>
      ledger.tool(
        welcome,
        warmRun.runId,
        { customerId: `warm-${i}`, email: `warm${i}@example.com`, subject: 'Warm', body: 'Warm' },
        ({ idempotencyKey, key, epoch, signal, args }) =>
          provider.send(
            { key, epoch, idempotencyKey, target: args.email, payload: { subject: args.subject, body: args.body } },
            signal,
          ),
        { provider },
      ),
    );

    // CPU per effect by part: the product's server, the floor's, PostgreSQL and the agents.
    const meter =
      procAvailable() && api.pid
        ? cpuMeter({ 'API server': api.pid, 'floor server': floorServer.pid }, await postmasterOf(opts.ownerUrl))
        : undefined;
    const floor = floorAgent(floorServer.url, provider, tag);
    const floorWarm = floorAgent(floorServer.url, provider, `${tag}-warm`);
    await closedLoop(warm, agents, (i) => floorWarm.send(i));
    const baseline = sandbox.deliveries.length;
    const perRound = Math.ceil(effects / ROUNDS);
    const log = (line: string) => console.log(`[bench] sdk over http: ${line}`);
    log(`${perRound * ROUNDS} effects per side in ${ROUNDS} alternating rounds, ${agents} agents at once`);
    api.phase?.('send');
    const send = await sideBySide(
      ROUNDS,
      perRound,
      agents,
      async (i) => {
        const r = await sendOne(customer(i, 'Welcome aboard'));
        if (r.status !== 'done') throw new Error(`effect ${i} ended ${r.status}`);
      },
      floor.send,
      log,
      meter,
    );
    const floorSent = perRound * ROUNDS;
    const afterSend = sandbox.deliveries.length - baseline - floorSent;
    log('the same effects again, subjects reworded: every one must be skipped');
    api.phase?.('replay');
    const replay = await sideBySide(
      ROUNDS,
      perRound,
      agents,
      async (i) => {
        const r = await sendOne(customer(i, 'Welcome aboard, again (reworded on replay)'));
        if (r.status !== 'skipped') throw new Error(`replayed effect ${i} was not skipped: ${r.status}`);
      },
      floor.replay,
      log,
      meter,
    );
    const owner = new pg.Client({ connectionString: opts.ownerUrl });
    await owner.connect();
    const done = Number(
      (
        await owner.query<{ n: string }>(`SELECT count(*) AS n FROM effect WHERE run_id = $1 AND state = 'done'`, [
          runId,
        ])
      ).rows[0]!.n,
    );
    await owner.end();
    result = {
      effects: floorSent,
      agents,
      send,
      replay,
      deliveries: {
        afterSend,
        afterReplay: sandbox.deliveries.length - baseline - floorSent,
        distinctTargets: new Set(
          sandbox.deliveries
            .slice(baseline)
            .filter((d) => !d.to.startsWith('floor-'))
            .map((d) => d.to),
        ).size,
      },
      done,
      server,
    };
  } finally {
    await floorServer.stop();
    await api.stop();
    await sandbox.stop();
    await db.$disconnect();
  }
  return server === 'child process' ? { ...result, replayProfile: readReplayProfile() } : result;
}
