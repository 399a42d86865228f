// Real child processes for the operations tests: run a script to its end, or start one and wait for
// a line; list a process's descendants from /proc (to prove none outlives a shutdown); port checks.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
/** tsx's loader by absolute URL, so a script also runs from a directory outside the repository. */
export const TSX = import.meta.resolve('tsx');

/** The environment a script gets: PATH and HOME, plus what the test names (nothing leaks from ours). */
export function scriptEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...vars };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx <script>` to its end. */
export function runScript(script: string, env: NodeJS.ProcessEnv, cwd = ROOT): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, path.join(ROOT, script)], { cwd, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves once the output (stdout and stderr) contains this text; rejects if the process exits first. */
  waitFor(text: string | RegExp): Promise<void>;
}

/** Starts `node <args>` (or another command, such as npm to run a script as the docs do). */
export function startScript(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT, command = process.execPath): Started {
  const child = spawn(command, args, { cwd, env });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (c: Buffer) => {
    out += c;
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = (text: string | RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (typeof text === 'string' ? out.includes(text) : text.test(out)) {
          waiters.delete(check);
          resolve();
        }
      };
      waiters.add(check);
      check();
      void exited.then((code) => {
        if (waiters.delete(check)) reject(new Error(`exited (${code}) before "${text}":\n${out.slice(-3000)}`));
      });
    });
  return { child, output: () => out, exited, waitFor };
}

/** Every live descendant of pid (children, their children ...), read from /proc. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may contain spaces: the fields after its closing parenthesis are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const visit = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      found.push(c);
      visit(c);
    }
  };
  visit(pid);
  return found;
}

/** Whether a process still exists (a zombie counts as gone: it runs nothing and holds no port). */
export function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
