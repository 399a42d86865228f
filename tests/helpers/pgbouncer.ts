// Debian's PgBouncer (the real component production puts in front of PostgreSQL) in transaction mode,
// started on a free port in front of the test server. CI installs it (.ci/run); PGBOUNCER_PATH
// overrides where it is. Run as root, it must be told to drop to another user.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@/lib/db/embedded.ts';

export interface PgBouncer {
  port: number;
  /** The same URL through PgBouncer, with the switch that drops named prepared statements. */
  through(url: string): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(server: { host: string; port: number }, logins: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const users = Object.entries(logins)
    .map(([u, p]) => `"${u}" "${p}"`)
    .join('\n');
  writeFileSync(path.join(dir, 'users.txt'), `${users}\n`, { mode: 0o644 });
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.host} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 10',
      'max_client_conn = 200',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const root = process.getuid?.() === 0;
  const child: ChildProcess = spawn(
    process.env.PGBOUNCER_PATH ?? '/usr/sbin/pgbouncer',
    [...(root ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c));
  child.stderr!.on('data', (c: Buffer) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.includes('process up') ? resolve() : undefined);
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then(() => reject(new Error(`pgbouncer exited: ${out}`)));
  });
  return {
    port,
    through(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      u.searchParams.set('pgbouncer', 'true');
      return u.toString();
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  } satisfies PgBouncer;
}
