// Scale-out through PgBouncer (issue 17, item 9): end-to-end effects per second (the SDK over HTTP:
// claim, sandbox send, outcome) with 1 and with 2 web processes, both behind PgBouncer in transaction
// mode, in alternating rounds of one run (same agents, same PgBouncer pool of server connections);
// then the claim race through it: rounds of 50 concurrent claims of one fresh key spread over both
// web processes, exactly one winner each. The web processes are sdk-http-server.ts children (the same
// route handlers `next start` serves). On a 2-core machine the second process competes with
// PostgreSQL, PgBouncer and the agents for the same cores, so its figure need not grow.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDb } from '@/lib/db/client.ts';
import { SandboxProvider, startSandbox } from '@/lib/providers/sandbox/index.ts';
import { createRuntimeKey } from '@/lib/runtime-keys/index.ts';
import { createLedger, defineTool, httpTransport } from '@/lib/sdk/index.ts';
import { startPgBouncer } from '@/tests/helpers/pgbouncer.ts';
import { alternatingRounds, percentile, type LoadResult } from './harness.ts';

export interface PgBouncerBench {
  effects: number;
  agents: number;
  one: LoadResult;
  two: LoadResult;
  race: { rounds: number; claimers: number; singleWinner: number; p50ms: number; p99ms: number };
  /** Effects in state done (must equal 2 x effects + warm) and distinct sandbox deliveries of the
   *  measured effects (must equal 2 x effects). */
  done: number;
  warm: number;
  delivered: number;
}

async function webProcess(url: string, connections: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./sdk-http-server.ts', import.meta.url)), url, String(connections)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`web process exited with ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

export async function benchPgBouncer(opts: {
  ownerUrl: string;
  appUrl: string;
  effects: number;
  agents: number;
  raceRounds?: number;
}): Promise<PgBouncerBench> {
  const { effects, agents } = opts;
  const app = new URL(opts.appUrl);
  const bouncer = await startPgBouncer(
    { host: app.hostname, port: Number(app.port) },
    { [decodeURIComponent(app.username)]: decodeURIComponent(app.password) },
  );
  const db = createDb(opts.appUrl, 2);
  const sandbox = await startSandbox();
  const webs: Awaited<ReturnType<typeof webProcess>>[] = [];
  const log = (line: string) => console.log(`[bench] pgbouncer: ${line}`);
  try {
    // Each web process gets as many pool connections as there are agents; PgBouncer multiplexes them
    // onto its pool of server connections (default_pool_size in tests/helpers/pgbouncer.ts).
    for (let i = 0; i < 2; i++) webs.push(await webProcess(bouncer.through(opts.appUrl), agents));
    const tag = Date.now().toString(36);
    const workflow = `bench_pgb_${tag}`;
    const system = { kind: 'system', id: 'bench', label: 'bench setup' } as const;
    const { token } = await createRuntimeKey(
      { db, actor: system },
      { name: `bench-pgb-${tag}`, workflows: [workflow] },
    );
    const toolRow = await db.toolDefinition.create({
      data: {
        name: `bench_pgb_${tag}`,
        actions: ['notify'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: ['subject', 'body'],
        supportsIdempotencyKey: true,
        supportsReceiptLookup: true,
      },
    });
    const tool = defineTool<{ id: string; email: string }>({
      name: toolRow.name,
      action: 'notify',
      targetType: 'email',
      generated: [],
      identity: (a) => ({ record: a.id, target: a.email }),
    });
    const provider = new SandboxProvider(sandbox.url);
    const ledgers = webs.map((w) => createLedger(httpTransport({ baseUrl: w.url, runtimeKey: token })));
    const { runId } = await ledgers[0]!.createRun({ workflow, triggerId: `evt-${tag}` });
    const effect = (ledgerIndex: number, id: string) =>
      ledgers[ledgerIndex]!.tool(
        tool,
        runId,
        { id, email: `${id}@pgb.bench.example.com` },
        ({ idempotencyKey, key, epoch, signal, args }) =>
          provider.send(
            { key, epoch, idempotencyKey, target: args.email, payload: { subject: 'Hi', body: 'Hi' } },
            signal,
          ),
        { provider },
      ).then((r) => {
        if (r.status !== 'done') throw new Error(`effect ${id} ended ${r.status}`);
      });
    // Warm both processes (JIT, pools, PgBouncer's server connections).
    const warm = Math.min(100, Math.ceil(effects / 10));
    await alternatingRounds(['warm'], warm, 1, agents, (_, i) => effect(i % 2, `warm-${i}`));
    log(`${effects} effects per side in alternating rounds, ${agents} agents at once`);
    const sides = await alternatingRounds(['1 web', '2 web'] as const, effects, 4, agents, (side, i) =>
      side === '1 web' ? effect(0, `one-${i}`) : effect(i % 2, `two-${i}`),
    );

    // The claim race: 50 claimers of one fresh key, alternating between the two processes.
    const rounds = opts.raceRounds ?? 20;
    const claimers = 50;
    const times: number[] = [];
    let singleWinner = 0;
    for (let r = 0; r < rounds; r++) {
      const body = JSON.stringify({
        runId,
        tool: toolRow.name,
        action: 'notify',
        recordId: `race-${r}`,
        target: `race${r}@pgb.bench.example.com`,
      });
      const t0 = performance.now();
      const statuses = await Promise.all(
        Array.from({ length: claimers }, (_, i) =>
          fetch(`${webs[i % 2]!.url}/api/v1/effects/claim`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body,
          }).then(async (res) => (await res.arrayBuffer(), res.status)),
        ),
      );
      times.push(performance.now() - t0);
      if (statuses.filter((s) => s === 201).length === 1 && statuses.filter((s) => s === 200).length === claimers - 1)
        singleWinner++;
    }
    times.sort((a, b) => a - b);
    const done = Number(
      (
        await db.$queryRawUnsafe<{ n: bigint }[]>(
          `SELECT count(*) AS n FROM effect WHERE run_id = $1::uuid AND state = 'done'`,
          runId,
        )
      )[0]!.n,
    );
    const delivered = new Set(sandbox.deliveries.filter((d) => /^(one|two)-/.test(d.to)).map((d) => d.to)).size;
    return {
      effects,
      agents,
      one: sides['1 web'],
      two: sides['2 web'],
      race: { rounds, claimers, singleWinner, p50ms: percentile(times, 50), p99ms: percentile(times, 99) },
      done,
      warm,
      delivered,
    };
  } finally {
    for (const w of webs) {
      const exited = new Promise((r) => w.child.once('exit', r));
      w.child.stdin!.end();
      await exited;
    }
    await sandbox.stop();
    await db.$disconnect();
    await bouncer.stop();
  }
}
