// Operator pages under many people (issue 18 item 6): SESSIONS signed-in sessions (each through
// next-auth's credentials flow over HTTP) ask `next start` for the runs list, a run of ITEMS plan
// items (1,000,000 by default), its plan, its replay page, the support queue and the audit trail, one
// request at a time per session with no think time (closed loop). The floor is the same server and
// the same number of sessions asking for a static route the same way: a page of the console
// prerendered at build time (/forbidden), which goes through the same router and response path as the
// operator pages but renders nothing per request. A public file (/robots.txt), which the server sends
// from disk before routing, is measured beside it for reference. Floor and pages rounds alternate, so
// that whatever else the machine does weighs on all alike; each figure is the median of its rounds.
// BENCH_PAGES_PROFILE=<dir> runs the server with --cpu-prof (profile on exit).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAuditVerification } from '@/lib/audit/verification.ts';
import { insertUser } from '@/lib/auth/users.ts';
import { createDb } from '@/lib/db/client.ts';
import type { Actor } from '@/lib/core/actor.ts';
import {
  browse,
  fetchSession,
  signInOverHttp,
  type BrowseStats,
  type PageKind,
  type Session,
} from '@/scripts/proof/support/load-browse.ts';
import { nextBuildIsFresh } from '@/scripts/support/next-build.ts';
import { loadMillionItemRun } from './console.ts';
import type { BenchDatabase } from './harness.ts';
import { measurePageCosts, type PageCost } from './page-costs.ts';
import { startProductionServer } from './production-server.ts';

const root = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export const PAGES_GOAL = { ratioOfToday: 3, todayRatio: 0.06, p95ms: 1000 } as const;
/** Counted in Chromium before the change (tests/e2e/link-prefetch.spec.ts failed with this many). */
const PREFETCHES_PER_RUN_VIEW = 28;
const PREFETCH_KIND = 'link prefetch (no longer sent)';
const PREFETCH_HEADERS = { rsc: '1', 'next-router-prefetch': '1', 'next-router-segment-prefetch': '/_tree' };

export interface PagesRound {
  kind: 'floor' | 'file' | 'pages';
  perSecond: number;
  stats: BrowseStats;
}

export interface PagesBench {
  items: number;
  sessions: number;
  secondsPerRound: number;
  rounds: PagesRound[];
  /** The static route (a prerendered page): the goal's floor. */
  floorPerSecond: number;
  /** A public file, for reference. */
  filePerSecond: number;
  pagesPerSecond: number;
  /** p95 over every page request of every pages round, and per page kind (ms). */
  p95ms: number;
  perKind: Record<string, { n: number; p50: number; p95: number }>;
  failures: number;
  firstFailures: string[];
  /** Each page kind alone: CPU per page of the server and the database (null off Linux). */
  costs: PageCost[] | null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

// Each operator page is a prerendered shell and its JSON view (components/views/): one page view is
// both requests, and the markers are facts of the view's answer.
function pagesOf(runId: string): PageKind[] {
  return [
    { kind: 'runs', shell: true, path: () => '/runs', markers: () => ['"shownStatus"', `"id":"${runId}"`] },
    { kind: 'run', shell: true, path: () => `/runs/${runId}`, markers: () => ['"rows":[{"id"'] },
    { kind: 'plan', shell: true, path: () => `/runs/${runId}/plan`, markers: () => ['"itemCount":'] },
    { kind: 'replay', shell: true, path: () => `/runs/${runId}/replay`, markers: () => ['"willSend":'] },
    { kind: 'support', shell: true, path: () => '/support', markers: () => ['"total":'] },
    { kind: 'audit', shell: true, path: () => '/audit', markers: () => ['"chain":{'] },
  ];
}

export async function benchConsolePages(
  o: BenchDatabase & { items: number; sessions: number; secondsPerRound: number; rounds: number },
): Promise<PagesBench | null> {
  if (!nextBuildIsFresh(root)) {
    console.log('[bench] pages: no fresh `next build`, section skipped (run `npx next build` first)');
    return null;
  }
  const db = createDb(o.appUrl, 4);
  const profileDir = process.env.BENCH_PAGES_PROFILE;
  const server = await startProductionServer(
    o.appUrl,
    profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [],
  );
  try {
    console.log(`[bench] pages: bulk-loading a ${o.items.toLocaleString('en-US')}-item run`);
    const { runId } = await loadMillionItemRun(o.ownerUrl, o.items);
    const password = `bench-${randomBytes(9).toString('base64url')}`;
    const system: Actor = { kind: 'system', id: 'bench', label: 'bench: pages' };
    const roles = ['operator', 'support', 'auditor', 'admin'] as const;
    const emails: string[] = [];
    const tag = Date.now().toString(36);
    for (let i = 0; i < o.sessions; i++) {
      const role = roles[i % roles.length]!;
      const email = `pages${i}.${tag}.${role}@bench.example.com`;
      await insertUser(db, { email, name: `Pages ${i}`, role, password }, system);
      emails.push(email);
    }
    // The audit page shows the background verification's stored result; one pass stands in for the worker.
    await runAuditVerification(db);
    const sessions: Session[] = [];
    for (let i = 0; i < emails.length; i += 8)
      sessions.push(...(await Promise.all(emails.slice(i, i + 8).map((e) => signInOverHttp(server.url, e, password)))));
    const floorSessions = sessions.map((_, i) => fetchSession(server.url, `floor ${i}`, null));
    const floorPages: PageKind[] = [
      { kind: 'static', path: () => '/forbidden', markers: () => ['Your role cannot open this page'] },
    ];
    const filePages: PageKind[] = [{ kind: 'file', path: () => '/robots.txt', markers: () => ['User-agent'] }];
    const pages = pagesOf(runId);
    const rounds: PagesRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      for (const kind of ['floor', 'file', 'pages'] as const) {
        const stats = await browse({
          sessions: kind === 'pages' ? sessions : floorSessions,
          pages: kind === 'floor' ? floorPages : kind === 'file' ? filePages : pages,
          durationMs: o.secondsPerRound * 1000,
          warmUp: r === 0,
        });
        const perSecond = (stats.requests - (r === 0 ? (kind === 'pages' ? pages.length : 1) : 0)) / stats.seconds;
        // Per kind, so that a slow round says which page made it slow.
        const kinds =
          kind === 'pages'
            ? ` (p50/max ms: ${Object.entries(stats.perKind)
                .map(([k, v]) => `${k} ${Math.round(v.p50)}/${Math.round(v.max)}`)
                .join(', ')})`
            : '';
        console.log(
          `[bench] pages: round ${r + 1} ${kind}: ${perSecond.toFixed(1)}/s, ${stats.failures.length} failed${kinds}`,
        );
        rounds.push({ kind, perSecond, stats });
      }
    }
    // A prefetch's URL carries a hash of its headers (`_rsc`); without it Next answers with a redirect.
    const prefetchPath = (await sessions[0]!.get('/audit', PREFETCH_HEADERS)).location ?? '/audit';
    const costs = await measurePageCosts({
      ownerUrl: o.ownerUrl,
      serverPid: server.pid,
      sessions,
      // The inbox of a person with no notifications: a console page with nothing in it, the fixed
      // cost every operator page pays (layout, session, navigation, rendering) before its content.
      pages: [
        ...floorPages,
        // The sign-in page: rendered per request like every console page, but with no session, no
        // database and almost nothing in it. What Next's per-request rendering costs on its own.
        { kind: 'dynamic, no data', path: () => '/sign-in', markers: () => ['Sign in'] },
        { kind: 'empty page', path: () => '/inbox', markers: () => ['Nothing here yet'] },
        ...pages,
        // A link prefetch as Next's <Link> sends it (the route's shape, `/_tree`), here of the audit
        // trail: what every console link on screen or hovered asked for before console links stopped
        // prefetching (components/ui/link.tsx).
        { kind: PREFETCH_KIND, path: () => prefetchPath, markers: () => [], headers: PREFETCH_HEADERS },
      ],
      seconds: Number(process.env.BENCH_PAGES_COST_SECONDS ?? 5),
      log: console.log,
    });
    const pageRounds = rounds.filter((x) => x.kind === 'pages');
    const failures = pageRounds.flatMap((x) => x.stats.failures);
    return {
      items: o.items,
      sessions: o.sessions,
      secondsPerRound: o.secondsPerRound,
      rounds,
      floorPerSecond: median(rounds.filter((x) => x.kind === 'floor').map((x) => x.perSecond)),
      filePerSecond: median(rounds.filter((x) => x.kind === 'file').map((x) => x.perSecond)),
      pagesPerSecond: median(pageRounds.map((x) => x.perSecond)),
      p95ms: median(pageRounds.map((x) => Math.max(...Object.values(x.stats.perKind).map((k) => k.p95)))),
      perKind: Object.fromEntries(
        pages.map((p) => {
          const ks = pageRounds.map((x) => x.stats.perKind[p.kind]!);
          return [
            p.kind,
            {
              n: ks.reduce((n, k) => n + k.n, 0),
              p50: median(ks.map((k) => k.p50)),
              p95: median(ks.map((k) => k.p95)),
            },
          ];
        }),
      ),
      failures: failures.length,
      firstFailures: failures.slice(0, 3).map((f) => `${f.kind} ${f.path}: ${f.why}`),
      costs,
    };
  } finally {
    await server.stop();
    await db.$disconnect();
  }
}

export function pagesLines(p: PagesBench | null): string[] {
  if (!p) return ['Not measured: no fresh `next build` of the console (`npx next build`, then run again).'];
  const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const ratio = p.pagesPerSecond / p.floorPerSecond;
  const goalRatio = PAGES_GOAL.ratioOfToday * PAGES_GOAL.todayRatio;
  return [
    `${p.sessions} signed-in sessions, closed loop (no think time), over HTTP against the production server (\`scripts/support/web-server.ts\`, what \`npm run start:prod\` runs) on the same machine as PostgreSQL and the load generator. Each session walks the runs list, a ${fmt(p.items)}-item run, its plan, its replay page, the support queue and the audit trail in turn. Each operator page is a prerendered shell and its JSON view (docs/ARCHITECTURE.md, "What a page view asks of the server"): one page view is both requests, asked for one after the other and timed together, and is served correctly only when the view holds the page's facts (a run's rows, the plan's count, ...). The floor is the same server and sessions asking for a static route: \`/forbidden\`, a console page prerendered at build time, which takes the same router and response path as the operator pages but renders nothing per request. A public file (\`/robots.txt\`, sent from disk before any routing) is shown beside it for reference. ${p.rounds.length / 3} rounds of ${p.secondsPerRound} s each, floor, file and pages alternating; figures are the medians of the rounds.`,
    '',
    '| figure | value |',
    '|---|---:|',
    `| floor (static route \`/forbidden\`) requests/s | ${fmt(p.floorPerSecond, 1)} |`,
    `| public file (\`/robots.txt\`) requests/s, for reference | ${fmt(p.filePerSecond, 1)} |`,
    `| operator pages/s | ${fmt(p.pagesPerSecond, 1)} |`,
    `| pages / public file | ${fmt(p.pagesPerSecond / p.filePerSecond, 3)} |`,
    `| pages / floor (goal ≥ ${fmt(goalRatio, 2)}: 3 times the ${PAGES_GOAL.todayRatio} measured before) | **${fmt(ratio, 3)}** (${ratio >= goalRatio ? 'met' : '**not met**'}) |`,
    `| worst page kind's p95 ms (goal < ${PAGES_GOAL.p95ms}) | **${fmt(p.p95ms)}** (${p.p95ms < PAGES_GOAL.p95ms ? 'met' : '**not met**'}) |`,
    `| pages not served correctly | ${p.failures}${p.firstFailures.length ? ` (${p.firstFailures.join(' | ')})` : ''} |`,
    '',
    '| page | requests | p50 ms | p95 ms |',
    '|---|---:|---:|---:|',
    ...Object.entries(p.perKind).map(([k, v]) => `| ${k} | ${fmt(v.n)} | ${fmt(v.p50)} | ${fmt(v.p95)} |`),
    '',
    `Rounds, requests/s: ${p.rounds.map((r) => `${r.kind} ${fmt(r.perSecond, 1)}`).join(', ')}.`,
    ...costLines(p.costs, fmt),
  ];
}

function costLines(costs: PageCost[] | null, fmt: (n: number, d?: number) => string): string[] {
  if (!costs) return [];
  return [
    '',
    'Each kind alone (every session asking for it, a few seconds each, after the rounds; an operator page is its shell and its view): CPU per page of the web server and of PostgreSQL (all backends) read from /proc, of the load generator from Node, and the transactions PostgreSQL committed per page.',
    '',
    '| page | alone/s | page bytes | server CPU ms/page | PostgreSQL CPU ms/page | load generator CPU ms/page | statements/page |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...costs.map(
      (c) =>
        `| ${c.kind} | ${fmt(c.perSecond, 1)} | ${fmt(c.bytes)} | ${fmt(c.serverMs, 1)} | ${fmt(c.databaseMs, 1)} | ${fmt(c.clientMs, 1)} | ${fmt(c.statements, 1)} |`,
    ),
    ...ceilingLine(costs, fmt),
    ...prefetchLine(costs, fmt),
  ];
}

/** What the link prefetches a browser sent with every page view cost, before console links stopped. */
function prefetchLine(costs: PageCost[], fmt: (n: number, d?: number) => string): string[] {
  const prefetch = costs.find((c) => c.kind === PREFETCH_KIND);
  const run = costs.find((c) => c.kind === 'run');
  if (!prefetch || !run) return [];
  return [
    '',
    `A link prefetch costs ${fmt(prefetch.serverMs, 1)} ms of server CPU, ${fmt(prefetch.serverMs / run.serverMs, 2)} of a run page. Before console links stopped prefetching, a browser viewing the run page and hovering its navigation and one row's link sent ${PREFETCHES_PER_RUN_VIEW} of them (\`tests/e2e/link-prefetch.spec.ts\` counts them, and now requires none): about ${fmt((PREFETCHES_PER_RUN_VIEW * prefetch.serverMs) / run.serverMs, 1)} run pages' worth of server CPU per view, which this benchmark's sessions, asking for pages only, never sent.`,
  ];
}

/** What a page rendered per request with nothing in it, and a console page with nothing in it, reach
 *  against the static route: the ceilings of any page. */
function ceilingLine(costs: PageCost[], fmt: (n: number, d?: number) => string): string[] {
  const floor = costs.find((c) => c.kind === 'static');
  const bare = costs.find((c) => c.kind === 'dynamic, no data');
  const empty = costs.find((c) => c.kind === 'empty page');
  if (!floor || !empty || !bare) return [];
  return [
    '',
    `Alone against the static route's ${fmt(floor.perSecond, 1)} requests/s: the sign-in page (rendered per request, no session, no database) serves ${fmt(bare.perSecond, 1)}/s, **${fmt(bare.perSecond / floor.perSecond, 3)}** of it, the most any page Next renders per request reaches on this server; the empty console page (\`/inbox\` with nothing in it, still rendered on the server) ${fmt(empty.perSecond, 1)}/s, **${fmt(empty.perSecond / floor.perSecond, 3)}**: the most an operator page rendered per request could reach, whatever its content cost, which is why they became shells over views. An operator page's bytes above are its view's; its shell (about the static route's) is the same for everyone and cached by the browser.`,
  ];
}
