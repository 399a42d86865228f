// Where the API server's time goes, one bench phase at a time (BENCH_SDK_PROFILE=<dir>): a V8 CPU
// profile taken through node:inspector, and the wall time of every database statement the server
// sends, grouped by statement (its prepared-statement name, else its first words). The bench tells the
// server when a phase starts (a line on its stdin); the previous phase's files are written then:
// <dir>/<phase>.cpuprofile (summarize with profile-summary.ts) and <dir>/<phase>-statements.md.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import pg from 'pg';

interface Stat {
  count: number;
  ms: number;
}

type QueryArg = string | { name?: string; text?: string } | undefined;

const stats = new Map<string, Stat>();

function label(arg: QueryArg): string {
  if (typeof arg === 'string') return arg.replace(/\s+/g, ' ').trim().slice(0, 60);
  return arg?.name ?? (arg?.text ?? '(other)').replace(/\s+/g, ' ').trim().slice(0, 60);
}

/** Wraps pg's Client#query (which Prisma's adapter uses too) to time every statement's round trip. */
function timeStatements(): void {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function timed(this: unknown, ...args: unknown[]) {
    const t0 = performance.now();
    const name = label(args[0] as QueryArg);
    const note = () => {
      const s = stats.get(name) ?? { count: 0, ms: 0 };
      s.count++;
      s.ms += performance.now() - t0;
      stats.set(name, s);
    };
    // pg-pool passes a callback; Prisma's adapter awaits the promise.
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...results: unknown[]) => {
        note();
        return (callback as (...r: unknown[]) => unknown)(...results);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) result.then(note, note);
    return result;
  };
}

function statementTable(): string {
  const rows = [...stats].sort((a, b) => b[1].ms - a[1].ms);
  const lines = ['| statement | calls | total ms | mean ms |', '|---|---:|---:|---:|'];
  for (const [name, s] of rows)
    lines.push(`| ${name.replace(/\|/g, '\\|')} | ${s.count} | ${s.ms.toFixed(0)} | ${(s.ms / s.count).toFixed(2)} |`);
  return lines.join('\n') + '\n';
}

/** Starts the probe; returns what to call when a phase starts and when the server stops. */
export async function startServerProbe(
  dir: string,
): Promise<{ phase(name: string): Promise<void>; stop(): Promise<void> }> {
  timeStatements();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  let current: string | null = null;
  const flush = async () => {
    if (current === null) return;
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(path.join(dir, `${current}.cpuprofile`), JSON.stringify(profile));
    writeFileSync(path.join(dir, `${current}-statements.md`), statementTable());
    current = null;
  };
  return {
    async phase(name) {
      await flush();
      stats.clear();
      current = name.replace(/[^a-z0-9-]/gi, '_');
      await session.post('Profiler.start');
    },
    async stop() {
      await flush();
      session.disconnect();
    },
  };
}
