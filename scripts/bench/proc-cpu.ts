// CPU time of processes from /proc (Linux only): how the benchmarks split a request's cost between the
// web server, PostgreSQL and the load generator, which throughput alone cannot tell apart.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** Whether this machine has /proc to read. */
export const procAvailable = (): boolean => existsSync('/proc/self/stat');

/** utime + stime of a process, and of its waited-for children when asked (PostgreSQL's exited workers). */
export function cpuMs(pid: number, children = false): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_MS;
  } catch {
    return 0; // exited meanwhile
  }
}

export function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
}

/** The postmaster and every backend it runs now. */
export function databaseCpuMs(postmaster: number): number {
  let total = cpuMs(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (parentOf(Number(entry)) === postmaster) total += cpuMs(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** The postmaster's pid: the parent of a backend this connection gets. */
export async function postmasterOf(ownerUrl: string): Promise<number> {
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  try {
    return parentOf((await owner.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
  } finally {
    await owner.end();
  }
}

/** Cumulative CPU milliseconds by part: each named server process, the database, and this process
 *  (the load generator: the agents or sessions). Differences of two readings split a phase's cost. */
export function cpuMeter(servers: Record<string, number>, postmaster: number): () => Record<string, number> {
  return () => {
    const self = process.cpuUsage();
    const parts: Record<string, number> = {};
    for (const [name, pid] of Object.entries(servers)) parts[name] = cpuMs(pid);
    parts.database = databaseCpuMs(postmaster);
    parts['load generator'] = (self.user + self.system) / 1000;
    return parts;
  };
}
