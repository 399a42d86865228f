// Where one operator page's time goes: each page kind asked alone by every session for a few seconds,
// with the CPU the web server and PostgreSQL spent (from /proc, so Linux only) and the statements the
// database committed, divided by the pages served. Throughput alone cannot say whether a page is slow
// because of rendering or because of the database; these per-page costs can.
import pg from 'pg';
import { browse, getPage, type PageKind, type Session } from '@/scripts/proof/support/load-browse.ts';
import { cpuMs, databaseCpuMs, parentOf, procAvailable } from './proc-cpu.ts';

export interface PageCost {
  kind: string;
  perSecond: number;
  bytes: number;
  /** CPU milliseconds per page: the web server, PostgreSQL (every backend), the load generator. */
  serverMs: number;
  databaseMs: number;
  clientMs: number;
  /** Transactions PostgreSQL committed per page (each statement outside a transaction is one). */
  statements: number;
}

export async function measurePageCosts(o: {
  ownerUrl: string;
  serverPid: number;
  sessions: Session[];
  pages: PageKind[];
  seconds: number;
  log: (line: string) => void;
}): Promise<PageCost[] | null> {
  if (!procAvailable()) return null;
  const owner = new pg.Client({ connectionString: o.ownerUrl });
  await owner.connect();
  try {
    const backend = (await owner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const postmaster = parentOf(backend);
    const commits = async () =>
      Number(
        (await owner.query<{ n: string }>('SELECT sum(xact_commit + xact_rollback)::text AS n FROM pg_stat_database'))
          .rows[0]!.n,
      );
    const costs: PageCost[] = [];
    for (const page of o.pages) {
      // A shell's bytes are the same for everyone (and cached by browsers): its view's are the page's.
      const bytes = (await getPage(o.sessions[0]!, page, 0)).body.length;
      await browse({ sessions: o.sessions, pages: [page], durationMs: 1000 }); // settle
      const before = { server: cpuMs(o.serverPid), db: databaseCpuMs(postmaster), commits: await commits() };
      const client = process.cpuUsage();
      const stats = await browse({ sessions: o.sessions, pages: [page], durationMs: o.seconds * 1000 });
      const clientUsed = process.cpuUsage(client);
      const n = Math.max(stats.requests, 1);
      const cost: PageCost = {
        kind: page.kind,
        perSecond: stats.requests / stats.seconds,
        bytes,
        serverMs: (cpuMs(o.serverPid) - before.server) / n,
        databaseMs: (databaseCpuMs(postmaster) - before.db) / n,
        clientMs: (clientUsed.user + clientUsed.system) / 1000 / n,
        // The two reads of the counter are committed transactions themselves.
        statements: Math.max((await commits()) - before.commits - 1, 0) / n,
      };
      o.log(
        `[bench] pages: ${page.kind} alone: ${cost.perSecond.toFixed(1)}/s, server ${cost.serverMs.toFixed(1)} ms, database ${cost.databaseMs.toFixed(1)} ms per page`,
      );
      costs.push(cost);
    }
    return costs;
  } finally {
    await owner.end();
  }
}
