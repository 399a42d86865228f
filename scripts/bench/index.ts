// `npm run bench`: every benchmark in one run on one fresh server; figures written to
// docs/BENCHMARKS.md with the machine, the command, each figure next to its ceiling or peer as a
// ratio and the goal it is held to, and the wall-clock time of every section.
// Sizes (all optional): BENCH_CLAIMS, BENCH_SDK_EFFECTS, BENCH_SDK_AGENTS, BENCH_AUDIT_SIZES,
// BENCH_AUDIT_APPENDS, BENCH_CONSOLE_SIZES, BENCH_REPLAY_SIZES (comma-separated lists);
// BENCH_PAGES_ITEMS, BENCH_PAGES_SESSIONS, BENCH_PAGES_SECONDS, BENCH_PAGES_ROUNDS, BENCH_PGBOUNCER_EFFECTS
// (numbers); BENCH_TREE_SIZE, BENCH_TREE_APPENDS, BENCH_TREE_SIMULATED (numbers);
// BENCH_TREE_KEEP (a directory to keep the tree section's exported bundle in, to profile its verification);
// BENCH_MANAGE_DECISIONS, BENCH_MANAGE_CALLERS (numbers);
// BENCH_ONLY=claims,sdk,audit,tree,console,pages,replay,pgbouncer,manage runs some sections only, and keeps the
// other sections of the existing file as they were (named as kept from an earlier run).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { benchAudit, type AuditBench } from './audit.ts';
import { benchTree, treeLines } from './audit-tree.ts';
import { benchClaims, type ClaimBench } from './claims.ts';
import { benchConsole, DEFAULT_CONSOLE_SIZES, type ConsoleSize } from './console.ts';
import { benchConsolePages, pagesLines } from './console-pages.ts';
import { createSiblingDatabase, startBenchDatabase, type BenchDatabase, type LoadResult } from './harness.ts';
import type { SideBySide } from './agent-path.ts';
import { benchSdkHttp, type SdkHttpBench, type ServerKind } from './sdk-http.ts';
import { benchPgBouncer, type PgBouncerBench } from './pgbouncer.ts';
import { benchManage, manageLines } from './manage.ts';

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const pct = (r: number) => `${fmt(r * 100)}%`;
const verdict = (met: boolean) => (met ? 'met' : '**not met**');

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  return raw
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}
/** BENCH_SDK_SERVER=production|node forces the SDK bench's server; default: the production server
 *  when a fresh build exists. */
function sdkServer(): ServerKind | undefined {
  const v = process.env.BENCH_SDK_SERVER;
  return v === 'production' ? 'production server' : v === 'node' ? 'child process' : undefined;
}
const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

const SECTIONS = ['claims', 'sdk', 'audit', 'tree', 'console', 'pages', 'replay', 'pgbouncer', 'manage'] as const;
type Section = (typeof SECTIONS)[number];

export const CLAIM_GOAL = 0.6;
export const VERIFY_GOAL_SECONDS = 10;
export const REPLAY_MEMORY_GOAL_MB = 400;

export function claimLines(c: ClaimBench): string[] {
  const row = (path: string, r: LoadResult) =>
    `| ${path} | ${fmt(r.perSecond)} | ${fmt(r.p50ms, 2)} | ${fmt(r.p99ms, 2)} |`;
  const lines = [
    `${fmt(c.rates[0]?.claims ?? 0)} claims per duplicate rate, ${c.connections} concurrent connections, fsync on. Duplicates of a key arrive back to back, so they race its first claimer. Paths:`,
    '',
    '- **raw**: one-row `INSERT ... ON CONFLICT (key, epoch) DO NOTHING RETURNING` into a table of the same shape as `effect` (`LIKE effect INCLUDING ALL`): the physical ceiling.',
    "- **ledger**: `claimEffect` (key derivation, tool and run lookup, then `ledger_claim` writing key head, effect, attempt, transition and the hash-chained audit entry). Claims made at the same moment share one transaction and one commit (group commit, `lib/db/group-commit.ts`: waiting claims are spread over up to a quarter of the pool's connections in batches of at least 8, a batch goes out at the end of the event-loop turn, so a lone claim waits for nothing); every claimer is answered only after the commit holding its row.",
    '- **raw grouped** (for reference): the raw insert with the same group commit (one multi-row `INSERT ... SELECT unnest(...) ON CONFLICT DO NOTHING` per batch): the ceiling when commits are shared. The ledger writes six rows per claim where raw writes one, so it stays far below this one.',
    "- **peer**: pg-boss 10 `send(queue, data, { singletonKey })` on a queue with policy `short` (unique key among queued jobs; on the default `standard` policy a singletonKey does not dedupe at all). Nothing consumes the queue, so every duplicate is refused: the peer's best case. A pg-boss key dedupes only while its job is queued (`short`), active (`singleton`) or either (`stately`); a ledger key stays claimed for good.",
    '',
    'The paths run in alternating rounds (raw, raw grouped, ledger, peer, four times over), so that whatever else the machine does weighs on each path alike.',
    '',
    "Cost growth here is by duplicate rate rather than by count: a claim is a unique-index probe whose cost barely moves with the number of keys already claimed, and 200,000 ledger claims alone would take most of the section's time budget.",
    '',
    '| duplicates | path | claims/s | p50 ms | p99 ms |',
    '|---|---|---:|---:|---:|',
  ];
  for (const r of c.rates) {
    lines.push(
      row(`${pct(r.duplicateRate)} | raw`, r.raw),
      row(`${pct(r.duplicateRate)} | raw grouped`, r.rawGrouped),
      row(`${pct(r.duplicateRate)} | ledger`, r.ledger),
      row(`${pct(r.duplicateRate)} | peer (pg-boss)`, r.peer),
    );
  }
  lines.push(
    '',
    `| duplicates | ledger / raw (goal ≥ ${CLAIM_GOAL}) | ledger / peer (goal > 1) | ledger / raw grouped | winners = distinct keys (raw, raw grouped, ledger, peer) |`,
    '|---|---:|---:|---:|---|',
  );
  for (const r of c.rates) {
    const toRaw = r.ledger.perSecond / r.raw.perSecond;
    const toPeer = r.ledger.perSecond / r.peer.perSecond;
    const toGrouped = r.ledger.perSecond / r.rawGrouped.perSecond;
    const correct = [...Object.values(r.winners), ...Object.values(r.rows)].every((n) => n === r.distinctKeys);
    lines.push(
      `| ${pct(r.duplicateRate)} | ${fmt(toRaw, 2)} (${verdict(toRaw >= CLAIM_GOAL)}) | ${fmt(toPeer, 2)} (${verdict(toPeer > 1)}) | ${fmt(toGrouped, 2)} | ${correct ? `yes, ${fmt(r.distinctKeys)} each` : `**no**: ${JSON.stringify({ ...r.winners, rows: r.rows })} for ${r.distinctKeys}`} |`,
    );
  }
  return lines;
}

/** Goals of the agent path against its floor (measured side by side in one run). */
export const AGENT_PATH_GOAL = { ratio: 0.5, p50Ratio: 3 };

export function sdkLines(s: SdkHttpBench, ledgerClaimsPerSecond: number | null): string[] {
  const correct =
    s.done === s.effects &&
    s.deliveries.byReplay === 0 &&
    s.deliveries.bySdk === s.deliveries.expected &&
    s.deliveries.distinctTargets === s.deliveries.expected;
  const row = (label: string, x: SideBySide) =>
    `| ${label} | ${fmt(x.product.perSecond)} | ${fmt(x.product.p50ms, 2)} | ${fmt(x.product.p95ms, 2)} | ${fmt(x.floor.perSecond)} | ${fmt(x.floor.p50ms, 2)} | ${fmt(x.floor.p95ms, 2)} | **${fmt(x.ratio, 2)}** (${verdict(x.ratio >= AGENT_PATH_GOAL.ratio)}) | ${fmt(x.p50Ratio, 2)} (${verdict(x.p50Ratio < AGENT_PATH_GOAL.p50Ratio)}) |`;
  const rounds = (x: SideBySide) =>
    x.rounds.map((r) => `${fmt(r.product.perSecond)} / ${fmt(r.floor.perSecond)}`).join(', ');
  const a = s.added;
  return [
    `${fmt(s.effects)} effects per side, ${s.agents} agents at once, Node's \`fetch\` on both sides. ${s.server === 'production server' ? "The API is served by the production server (`scripts/support/web-server.ts`, what `npm run start:prod` runs) on the project's own build: its front hands /api/v1 to the route handlers of `app/api/v1` and writes a JSON access line per request." : `The API is served over real HTTP by a plain \`node:http\` server (${s.server}) dispatching to the route handlers of \`app/api/v1\`, the lean path the production server takes for the agent API, with its JSON access line per request.`}`,
    '',
    "- **product**: the SDK's own path through its HTTP transport: a claim, then the outcome report carrying the raw response (R1), each a POST with its own Idempotency-Key (Z5). No provider is called: the raw response is made in process and classified by the sandbox's classifier.",
    '- **floor**: a bare `node:http` server with a `pg` pool on the same database (fsync on) doing the same two POSTs: an `INSERT ... ON CONFLICT DO NOTHING` to claim and one `UPDATE` of the response, state and receipt for the outcome (`scripts/bench/floor-server.ts`). It checks no key and writes no transition row, audit entry or idempotency record, which the product must.',
    '',
    `Goal: the product at least ${AGENT_PATH_GOAL.ratio} of the floor's effects/s, with a p50 under ${AGENT_PATH_GOAL.p50Ratio} times the floor's. Product and floor rounds alternate; each figure is the median of three rounds.`,
    '',
    '| figure | product effects/s | p50 ms | p95 ms | floor effects/s | p50 ms | p95 ms | product / floor | p50 product / floor |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('effect (claim + outcome with the raw response)', s.send),
    row('replay of the same effects, subjects reworded (every one skipped)', s.replay),
    '',
    `Rounds, product / floor effects/s: effect ${rounds(s.send)}; replay ${rounds(s.replay)}.`,
    ledgerClaimsPerSecond
      ? `End-to-end effects/s / ledger claims/s at 0% duplicates (the claim is the ceiling of an effect): ${fmt(s.send.product.perSecond / ledgerClaimsPerSecond, 2)}.`
      : 'Ledger claims were not measured in this run, so no claims ratio.',
    '',
    `What the ledger adds to an agent's provider call, as the agent sees it: the sandbox provider called directly, and through the SDK (claim, the same call, the outcome), ${s.agents} agents, alternating rounds, medians:`,
    '',
    '| path | effects/s | p50 ms | p95 ms | mean ms |',
    '|---|---:|---:|---:|---:|',
    `| sandbox called directly | ${fmt(a.direct.perSecond)} | ${fmt(a.direct.p50ms, 2)} | ${fmt(a.direct.p95ms, 2)} | ${fmt(a.direct.meanMs, 2)} |`,
    `| through the SDK | ${fmt(a.product.perSecond)} | ${fmt(a.product.p50ms, 2)} | ${fmt(a.product.p95ms, 2)} | ${fmt(a.product.meanMs, 2)} |`,
    '',
    `Added per effect: **${fmt(a.addedP50ms, 1)} ms** at the p50, ${fmt(a.addedMeanMs, 1)} ms on average.`,
    '',
    `Checked: ${correct ? `${fmt(s.done)} effects done; the replay sent nothing; ${fmt(s.deliveries.bySdk)} deliveries through the SDK to as many distinct targets` : `**wrong counts**: ${JSON.stringify({ ...s.deliveries, done: s.done, effects: s.effects })}`}.`,
    ...cpuLines(s),
    ...replayProfileLines(s),
  ];
}

/** CPU per effect by part, from /proc: where each side's cost lands on the shared cores. */
function cpuLines(s: SdkHttpBench): string[] {
  if (!s.send.cpu || !s.replay.cpu) return [];
  const parts = [...new Set([...Object.keys(s.send.cpu.product), ...Object.keys(s.send.cpu.floor)])];
  const cell = (x: Record<string, number>) => parts.map((p) => fmt(x[p] ?? 0, 2)).join(' | ');
  const total = (x: Record<string, number>) =>
    fmt(
      Object.values(x).reduce((a, b) => a + b, 0),
      2,
    );
  return [
    '',
    'CPU milliseconds per effect, by process (from /proc, over all rounds of each side):',
    '',
    `| side | ${parts.join(' | ')} | total |`,
    `|---|${parts.map(() => '---:').join('|')}|---:|`,
    ...(['send', 'replay'] as const).flatMap((phase) =>
      (['product', 'floor'] as const).map(
        (side) =>
          `| ${phase === 'send' ? 'effect' : phase}, ${side} | ${cell(s[phase].cpu![side])} | ${total(s[phase].cpu![side])} |`,
      ),
    ),
  ];
}

/** Where the API server's time went during the replay (BENCH_SDK_PROFILE=<dir>). */
function replayProfileLines(s: SdkHttpBench): string[] {
  const p = s.replayProfile;
  if (!p) return [];
  return [
    '',
    `Where the replay's time went in the API server (\`BENCH_SDK_PROFILE=<dir>\`: a CPU profile of the replay phase, ${fmt(p.totalMs / 1000, 1)} s sampled, and the wall time of each database statement it sent, from send to answer):`,
    '',
    '| where (server CPU) | ms | share |',
    '|---|---:|---:|',
    ...p.byPlace.map((x) => `| ${x.name} | ${fmt(x.ms)} | ${fmt(x.share * 100, 1)}% |`),
    '',
    p.statements.trimEnd(),
  ];
}

export function auditLines(a: AuditBench): string[] {
  const lines = [
    `Appends through \`appendAudit\` (app role, one transaction each), ${a.writers} writers at once. One chain per subject: appends to different subjects run in parallel, appends to one subject take turns on its chain head (row lock held to commit).`,
    '',
    '| appends | per second | p50 ms | p99 ms |',
    '|---|---:|---:|---:|',
    `| many subjects | ${fmt(a.manySubjects.perSecond)} | ${fmt(a.manySubjects.p50ms, 2)} | ${fmt(a.manySubjects.p99ms, 2)} |`,
    `| one hot subject (the per-chain ceiling) | ${fmt(a.hotSubject.perSecond)} | ${fmt(a.hotSubject.p50ms, 2)} | ${fmt(a.hotSubject.p99ms, 2)} |`,
    '',
    `Hot subject / many subjects: **${fmt(a.hotSubject.perSecond / a.manySubjects.perSecond, 2)}**. The hot chain holds ${fmt(a.hotChainSeq)} entries after ${fmt(a.hotSubject.ops)} appends (${a.hotChainSeq === a.hotSubject.ops ? 'none lost or doubled' : '**mismatch**'}).`,
    '',
    `Verification of the whole trail (\`verifyAuditTrail\`: one statement, \`audit_verify()\`, every entry's hash recomputed, every link and chain head checked); goal: 1,000,000 entries in under ${VERIFY_GOAL_SECONDS} s. The trail is bulk-loaded in chains of 10 with the hashes the trigger computes.`,
    '',
    '| entries | chains | verify s | entries/s | result |',
    '|---:|---:|---:|---:|---|',
    ...a.verify.map(
      (v) =>
        `| ${fmt(v.entries)} | ${fmt(v.chains)} | ${fmt(v.seconds, 2)} | ${fmt(v.entries / v.seconds)} | ${v.ok ? 'intact' : '**broken**'}${v.entries >= 1_000_000 ? ` (goal ${verdict(v.seconds < VERIFY_GOAL_SECONDS)})` : ''} |`,
    ),
    '',
    `Tamper check: entry ${a.tamper.entryId} changed in a rolled-back transaction; verification named entry ${a.tamper.reportedEntryId ?? 'none'} (${a.tamper.problem ?? 'no problem found'}): ${a.tamper.reportedEntryId === a.tamper.entryId ? 'correct' : '**wrong**'}.`,
    '',
    "Filtered queries (the console's audit read model, `auditPage`, 50 rows; and the chain of one subject), p50 / p95 ms:",
    '',
    '| query | p50 ms | p95 ms |',
    '|---|---:|---:|',
    ...Object.entries(a.queries).map(([k, v]) => `| ${k} | ${fmt(v.p50, 2)} | ${fmt(v.p95, 2)} |`),
  ];
  return lines;
}

export function consoleLines(sizes: ConsoleSize[]): string[] {
  if (!sizes.length) return [];
  const keys = Object.keys(sizes[0]!.figures);
  return [
    'Each size is its own run in the same database: plan items bulk-loaded, 90% with an effect (mostly done), each effect with the history its timeline shows (its claim, its provider call, and for a finished one the answer and the state change). Read-model calls as the pages make them, on the app role, p50 / p95 over 40 calls. The timeline pages hold 50 events.',
    '',
    `| figure | ${sizes.map((s) => `${fmt(s.items)} items`).join(' | ')} |`,
    `|---|${sizes.map(() => '---:').join('|')}|`,
    ...keys.map((k) => `| ${k} | ${sizes.map((s) => fmt(s.figures[k]!, 2)).join(' | ')} |`),
    '',
    `Checked: ${sizes.every((s) => s.rows.planItems === s.items && s.rows.effects === s.items - Math.floor(s.items / 10)) ? 'every run holds its plan items and 90% of them as effects' : `**wrong counts**: ${JSON.stringify(sizes.map((s) => s.rows))}`}.`,
  ];
}

function figureTable(figures: Record<string, number>): string[] {
  return ['| figure | value |', '|---|---:|', ...Object.entries(figures).map(([k, v]) => `| ${k} | ${fmt(v, 2)} |`)];
}

async function machine(db: BenchDatabase): Promise<string[]> {
  const c = new pg.Client({ connectionString: db.ownerUrl });
  await c.connect();
  const version = (await c.query<{ v: string }>(`SELECT current_setting('server_version') AS v`)).rows[0]!.v;
  const settings = (
    await c.query<{ name: string; setting: string; unit: string | null }>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers', 'max_parallel_workers_per_gather', 'fsync', 'synchronous_commit')`,
    )
  ).rows;
  await c.end();
  const cpu = os.cpus();
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`);
  return [
    '## Machine and command',
    '',
    `- ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown CPU'}), ${fmt(os.totalmem() / 2 ** 30, 1)} GiB memory, ${os.type()} ${os.release()}, Node ${process.version}.`,
    `- PostgreSQL ${version} (${process.env.MIGRATION_DATABASE_URL ? 'the server at MIGRATION_DATABASE_URL' : 'embedded, started by the bench'}); ${settings.map((s) => `${s.name}=${s.setting}${s.unit ?? ''}`).join(', ')}.`,
    `- Command: \`${[...env, 'npm run bench'].join(' ')}\`.`,
    '',
  ];
}

export function pgBouncerLines(p: PgBouncerBench): string[] {
  const row = (side: string, r: PgBouncerBench['one']) =>
    `| ${side} | ${fmt(r.perSecond)} | ${fmt(r.p50ms, 1)} | ${fmt(r.p99ms, 1)} |`;
  const correct =
    p.done === 2 * p.effects + p.warm && p.delivered === 2 * p.effects && p.race.singleWinner === p.race.rounds;
  return [
    `${fmt(p.effects)} effects per side, ${p.agents} SDK agents over HTTP (claim, sandbox send, outcome), web processes (the agent API's route handlers in \`scripts/bench/sdk-http-server.ts\`) connected through PgBouncer in transaction mode (\`pgbouncer=true\`, pool of 10 server connections), alternating rounds of the two sides.`,
    '',
    '| web processes | effects/s | p50 ms | p99 ms |',
    '|---|---:|---:|---:|',
    row('1', p.one),
    row('2', p.two),
    '',
    `2 processes / 1: **${fmt(p.two.perSecond / p.one.perSecond, 2)}**. Claim race through PgBouncer: ${p.race.rounds} rounds of ${p.race.claimers} concurrent claims of one fresh key over both processes, ${p.race.singleWinner} of ${p.race.rounds} with exactly one winner; all ${p.race.claimers} answers in p50 ${fmt(p.race.p50ms, 1)} ms, p99 ${fmt(p.race.p99ms, 1)} ms. Effects done and delivered once: ${correct ? 'yes' : '**no**'} (${fmt(p.done)} done including ${fmt(p.warm)} warm-up effects, ${fmt(p.delivered)} distinct deliveries of the measured ones).`,
    '',
    `On ${os.cpus().length} cores the second process shares the same cores with PostgreSQL, PgBouncer, the agents and the sandbox: a second process helps only while one process's event loop, not the database's commits or the CPU, is the limit. What stays the same with any number of processes is the shared limit: the database's commit rate through PgBouncer's server connections.`,
  ];
}

/** The `## ` sections of an earlier file that this run did not write (neither the machine nor the
 *  wall clock, which are this run's): BENCH_ONLY re-measures some sections without dropping the rest. */
const KEPT_SENTENCE = 'Sections below are kept from an earlier run of the file';

function earlierSections(text: string, written: string[]): { title: string; lines: string[] }[] {
  const mine = new Set(written.filter((l) => l.startsWith('## ')));
  const sections: { title: string; lines: string[] }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) sections.push({ title: line.slice(3), lines: [] });
    // The earlier run's own "kept" sentence belongs to that file's layout, not to the section above it.
    if (line.startsWith(KEPT_SENTENCE)) continue;
    sections.at(-1)?.lines.push(line);
  }
  return sections.filter(
    (s) => !mine.has(`## ${s.title}`) && s.title !== 'Machine and command' && s.title !== 'Wall clock',
  );
}

async function main() {
  const wallStart = performance.now();
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()) as Section[] | undefined;
  const runs = (s: Section) => !only || only.includes(s);
  const claims = num('BENCH_CLAIMS', 20_000);
  const connections = 16;
  const timings: [string, number][] = [];
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      timings.push([name, (performance.now() - t0) / 1000]);
      console.log(`[bench] ${name}: ${fmt((performance.now() - t0) / 1000, 1)} s`);
    }
  };
  const lines: string[] = [];
  const db = await timed('start PostgreSQL and migrate', startBenchDatabase);
  let header: string[];
  try {
    header = await machine(db);
    let ledgerClaims: number | null = null;
    if (runs('claims')) {
      const c = await timed('claims', () => benchClaims({ ...db, claims, connections }));
      ledgerClaims = c.rates[0]?.duplicateRate === 0 ? c.rates[0].ledger.perSecond : null;
      lines.push('## Claims', '', ...claimLines(c), '');
    }
    if (runs('sdk')) {
      const s = await timed('sdk over http', () =>
        benchSdkHttp({
          ...db,
          effects: num('BENCH_SDK_EFFECTS', 1_000),
          agents: num('BENCH_SDK_AGENTS', 16),
          server: sdkServer(),
        }),
      );
      lines.push('## End-to-end effects with the SDK over HTTP', '', ...sdkLines(s, ledgerClaims), '');
    }
    if (runs('audit')) {
      // Its own database on the same server, so the verification sizes are exactly the trail's size.
      const auditDb = await createSiblingDatabase(db, `bench_audit_${Date.now().toString(36)}`);
      try {
        const a = await timed('audit', () =>
          benchAudit({
            ...auditDb,
            sizes: list('BENCH_AUDIT_SIZES', [10_000, 100_000, 1_000_000]),
            appends: num('BENCH_AUDIT_APPENDS', 5_000),
            writers: connections,
          }),
        );
        lines.push('## Audit trail', '', ...auditLines(a), '');
      } finally {
        await auditDb.stop();
      }
    }
    if (runs('tree')) {
      // Its own database too: the tree's size is exactly the loaded trail's.
      const treeDb = await createSiblingDatabase(db, `bench_tree_${Date.now().toString(36)}`);
      try {
        const b = await timed('audit tree', () =>
          benchTree({
            ...treeDb,
            size: num('BENCH_TREE_SIZE', 1_000_000),
            appends: num('BENCH_TREE_APPENDS', 5_000),
            writers: connections,
            simulated: num('BENCH_TREE_SIMULATED', 10_000_000),
            keepBundle: process.env.BENCH_TREE_KEEP,
          }),
        );
        lines.push('## Audit tree', '', ...treeLines(b), '');
      } finally {
        await treeDb.stop();
      }
    }
    if (runs('console')) {
      const sizes = await timed('console', () =>
        benchConsole({ ...db, sizes: list('BENCH_CONSOLE_SIZES', DEFAULT_CONSOLE_SIZES) }),
      );
      lines.push('## Console read models', '', ...consoleLines(sizes), '');
    }
    if (runs('pages')) {
      const p = await timed('console pages', () =>
        benchConsolePages({
          ...db,
          items: num('BENCH_PAGES_ITEMS', 1_000_000),
          sessions: num('BENCH_PAGES_SESSIONS', 32),
          secondsPerRound: num('BENCH_PAGES_SECONDS', 20),
          rounds: num('BENCH_PAGES_ROUNDS', 3),
        }),
      );
      lines.push('## Operator pages under many sessions', '', ...pagesLines(p), '');
    }
    if (runs('replay')) {
      lines.push('## Forced replay', '');
      if (existsSync(new URL('./replay.ts', import.meta.url))) {
        const mod = (await import('./replay.ts')) as { benchReplay?: (o: object) => Promise<Record<string, number>> };
        const sizes = process.env.BENCH_REPLAY_SIZES ? list('BENCH_REPLAY_SIZES', []) : undefined;
        const figures = mod.benchReplay ? await timed('replay', () => mod.benchReplay!({ ...db, sizes })) : null;
        if (figures)
          lines.push(
            `Goal: worker peak memory flat from 10,000 to 100,000 targets and under ${REPLAY_MEMORY_GOAL_MB} MB.`,
            '',
            ...figureTable(figures),
            '',
          );
        else lines.push('Not measured: scripts/bench/replay.ts exports no benchReplay.', '');
      } else lines.push('Not measured: scripts/bench/replay.ts not present.', '');
    }
    if (runs('pgbouncer')) {
      const p = await timed('pgbouncer', () =>
        benchPgBouncer({ ...db, effects: num('BENCH_PGBOUNCER_EFFECTS', 2_000), agents: num('BENCH_SDK_AGENTS', 16) }),
      );
      lines.push('## Web processes behind PgBouncer', '', ...pgBouncerLines(p), '');
    }
    if (runs('manage')) {
      const m = await timed('management API decisions', () =>
        benchManage({ ...db, decisions: num('BENCH_MANAGE_DECISIONS', 800), callers: num('BENCH_MANAGE_CALLERS', 8) }),
      );
      lines.push('## Management API decisions', '', ...manageLines(m), '');
    }
  } finally {
    await db.stop();
  }
  const total = (performance.now() - wallStart) / 1000;
  const skipped = SECTIONS.filter((s) => !runs(s));
  const output = process.env.BENCH_OUTPUT ?? 'docs/BENCHMARKS.md';
  const kept = only && existsSync(output) ? earlierSections(readFileSync(output, 'utf8'), lines) : [];
  const doc = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}. ${kept.length ? 'Every figure in a section of this run comes from the same run on the same machine; the sections kept from an earlier run (named below) come from that run' : 'Every figure below comes from the same run on the same machine'}; compare ratios, not absolute numbers, across machines.${skipped.length ? ` Sections not run (BENCH_ONLY): ${skipped.join(', ')}.` : ''}`,
    '',
    ...header,
    ...lines,
    ...(kept.length
      ? [
          `${KEPT_SENTENCE} (this run had BENCH_ONLY=${only!.join(',')}): ${kept.map((k) => k.title).join('; ')}.`,
          '',
          ...kept.flatMap((k) => k.lines),
        ]
      : []),
    '## Wall clock',
    '',
    '| section | seconds |',
    '|---|---:|',
    ...timings.map(([name, s]) => `| ${name} | ${fmt(s, 1)} |`),
    `| **total** | **${fmt(total, 1)}** |`,
    '',
  ];
  writeFileSync(output, doc.join('\n'));
  console.log(`[bench] wrote ${output} in ${fmt(total, 1)} s`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
