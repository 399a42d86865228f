// End-to-end effects per second: agents using the SDK's HTTP transport against the agent API served
// over real HTTP. The server is the production server (production-server.ts) when the project has a
// `.next` build newer than its sources, else (a clean clone) sdk-http-server.ts in its own process:
// the same route handlers behind a plain node:http server. BENCH_SDK_SERVER forces one.
// Three phases: the SDK's own path (claim, then the outcome carrying a raw response made in process:
// no provider call) against the two-POST floor (agent-path.ts); the same effects replayed through the
// sandbox provider with reworded subjects, every one of which must be skipped (K1, S1); and what the
// ledger adds to an agent's provider call (the sandbox called directly and through the SDK).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createDb } from '@/lib/db/client.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { createLedger, httpTransport } from '@/lib/sdk/index.ts';
import { SandboxProvider, startSandbox } from '@/lib/providers/sandbox/index.ts';
import {
  addedLatency,
  cannedResponse,
  floorAgent,
  sideBySide,
  startFloor,
  type AddedLatency,
  type SideBySide,
} from './agent-path.ts';
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
  /** The product's effects against the floor's (no provider call on either side), alternating
   *  rounds, medians. */
  send: SideBySide;
  /** Replaying every effect with a reworded subject through the sandbox provider (all must skip
   *  without a provider call), against the floor's losing claim. */
  replay: SideBySide;
  /** The sandbox called directly and through the SDK: what the ledger adds per effect. */
  added: AddedLatency;
  /** Sandbox deliveries: by the replay (must be 0), and by the SDK in the added-latency phase (must
   *  equal `added` effects, each to its own target). */
  deliveries: { byReplay: number; bySdk: number; distinctTargets: number; expected: number };
  /** Effects in state done for the send phase's run: must equal `effects`. */
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
  // Its access lines (stdout) go to a file, as a production log does, not through a pipe to this
  // process: read here, they cost the load generator (the agents' side) a line's parse per request,
  // which the floor, logging nothing, never paid. The URL comes on a pipe of its own (fd 3).
  const logDir = mkdtempSync(path.join(tmpdir(), 'ledger-bench-api-'));
  const logFd = openSync(path.join(logDir, 'access.log'), 'w');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./sdk-http-server.ts', import.meta.url)), appUrl, String(connections)],
    { stdio: ['pipe', logFd, 'inherit', 'pipe'], env: { ...process.env, SDK_HTTP_URL_FD: '3' } },
  );
  closeSync(logFd);
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdio[3] as Readable });
    rl.once('line', (l) => {
      rl.close();
      resolve(l);
    });
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
        child.once('exit', () => {
          rmSync(logDir, { recursive: true, force: true });
          resolve();
        });
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
    // The SDK's own path (Ledger.effect: what tool() and send() run), so the bench does not depend on
    // how a tool definition resolves its identity.
    const spec = (run: string, i: number, prefix = 'bench') => ({
      run,
      tool: toolRow.name,
      action: 'campaign_welcome',
      record: `cust-${i}`,
      target: `${prefix}${i}@example.com`,
    });
    // No provider: the outcome carries a raw response made in process, classified as the sandbox's.
    const effectOnly = (run: string, i: number, prefix?: string) =>
      ledger.effect(spec(run, i, prefix), async ({ key }) => cannedResponse(key), { provider });
    const viaSandbox = (run: string, i: number, subject: string, prefix?: string) =>
      ledger.send(provider, spec(run, i, prefix), { subject, body: `Hello ${i}` });
    const { runId } = await ledger.createRun({ workflow, triggerId: `evt-${tag}` });

    // Warm both servers (JIT, connection pools, plan caches) before measuring.
    const warm = Math.min(100, Math.ceil(effects / 10));
    const warmRun = await ledger.createRun({ workflow, triggerId: `evt-warm-${tag}` });
    await closedLoop(warm, agents, (i) => effectOnly(warmRun.runId, i, 'warm'));

    // CPU per effect by part: the product's server, the floor's, PostgreSQL and the agents.
    const meter =
      procAvailable() && api.pid
        ? cpuMeter({ 'API server': api.pid, 'floor server': floorServer.pid }, await postmasterOf(opts.ownerUrl))
        : undefined;
    const floor = floorAgent(floorServer.url, provider, tag);
    const floorWarm = floorAgent(floorServer.url, provider, `${tag}-warm`);
    await closedLoop(warm, agents, (i) => floorWarm.send(i));
    const perRound = Math.ceil(effects / ROUNDS);
    const log = (line: string) => console.log(`[bench] sdk over http: ${line}`);
    log(`${perRound * ROUNDS} effects per side in ${ROUNDS} alternating rounds, ${agents} agents at once`);
    api.phase?.('send');
    const send = await sideBySide(
      ROUNDS,
      perRound,
      agents,
      async (i) => {
        const r = await effectOnly(runId, i);
        if (r.status !== 'done') throw new Error(`effect ${i} ended ${r.status}`);
      },
      floor.send,
      log,
      meter,
    );
    const sent = perRound * ROUNDS;
    log('the same effects again through the sandbox, subjects reworded: every one must be skipped');
    const beforeReplay = sandbox.deliveries.length;
    api.phase?.('replay');
    const replay = await sideBySide(
      ROUNDS,
      perRound,
      agents,
      async (i) => {
        const r = await viaSandbox(runId, i, 'Welcome aboard, again (reworded on replay)');
        if (r.status !== 'skipped') throw new Error(`replayed effect ${i} was not skipped: ${r.status}`);
      },
      floor.replay,
      log,
      meter,
    );
    const byReplay = sandbox.deliveries.length - beforeReplay;
    log('what the ledger adds to a provider call: the sandbox directly, and through the SDK');
    api.phase?.('added');
    const addedRun = await ledger.createRun({ workflow, triggerId: `evt-added-${tag}` });
    const addedPerRound = Math.ceil(perRound / 2);
    const beforeAdded = sandbox.deliveries.length;
    const added = await addedLatency(
      ROUNDS,
      addedPerRound,
      agents,
      async (i) => {
        const r = await viaSandbox(addedRun.runId, i, 'Welcome aboard', 'added');
        if (r.status !== 'done') throw new Error(`effect ${i} ended ${r.status}`);
      },
      async (i) => {
        const raw = await provider.send({
          key: `direct:${tag}:${i}`,
          epoch: 1,
          idempotencyKey: `direct-${tag}-${i}`,
          target: `direct${i}@example.com`,
          payload: { subject: 'Welcome aboard', body: `Hello ${i}` },
        });
        if (provider.classify(raw).outcome !== 'done') throw new Error(`direct send ${i} was not accepted`);
      },
      log,
    );
    const bySdk = sandbox.deliveries
      .slice(beforeAdded)
      .filter((d) => d.to.startsWith('added'))
      .map((d) => d.to);
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
      effects: sent,
      agents,
      send,
      replay,
      added,
      deliveries: {
        byReplay,
        bySdk: bySdk.length,
        distinctTargets: new Set(bySdk).size,
        expected: addedPerRound * ROUNDS,
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
