// Child processes that stop with their parent. Each child leads its own process group, so a signal
// to the group also reaches whatever it started in turn (`next` and its workers), and the parent
// decides the order: it tells every group to stop, waits up to the grace period while they finish
// in-flight work, then kills what is left. Before this, `npx next start` got the SIGTERM, exited,
// and left the Next.js server running as an orphan.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createRequire } from 'node:module';

export interface GroupChild {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code (or the signal's name) once the child has exited. */
  exited: Promise<number | string>;
}

/** The Next.js CLI run by this Node directly: no npx (or shell) in between to swallow signals. */
export function nextCli(): string {
  return createRequire(import.meta.url).resolve('next/dist/bin/next');
}

export function spawnGroup(name: string, command: string, args: string[], options: SpawnOptions): GroupChild {
  const child = spawn(command, args, { ...options, detached: true });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 1));
  });
  return { name, child, exited };
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * SIGTERM to each child's group, then up to graceMs for them to finish what they hold, then SIGKILL
 * to any group still there (stragglers included: a group outlives its leader while members remain).
 * Returns the names of children that had to be killed.
 */
export async function stopGroups(children: GroupChild[], graceMs: number): Promise<string[]> {
  for (const c of children) signalGroup(c.child.pid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  const late: string[] = [];
  await Promise.all(
    children.map(async (c) => {
      if ((await Promise.race([c.exited, deadline])) === 'late') late.push(c.name);
    }),
  );
  clearTimeout(timer);
  for (const c of children) signalGroup(c.child.pid, 'SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  return late;
}

/**
 * Makes `handler` the only answer to SIGINT and SIGTERM. A library may have hooked them already: the
 * embedded PostgreSQL package stops its clusters and exits with 143 on SIGTERM, which pulls the
 * database from under the console and the worker while they finish what they hold, and ends this
 * process before it has stopped them. The supervisor decides the order instead.
 */
export function ownStopSignals(handler: () => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}
