// Debian's PgBouncer (the real component production puts in front of PostgreSQL) in transaction mode,
// started on a free port in front of the test server. CI installs it (.ci/run); PGBOUNCER_PATH
// overrides where it is. Run as root, it must be told to drop to another user.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@/lib/db/embedded.ts';

export interface PgBouncer {
  port: number;
  /** The same URL through PgBouncer, with the switch that drops named prepared statements. */
  through(url: string): string;
  stop(): Promise<void>;
}

/** The repository's deploy/pgbouncer.ini with its "site" lines (addresses, port, authentication) set
 *  for this test server: the tests run the configuration the docs hand to operators. */
function siteConfig(server: { host: string; port: number }, port: number, authFile: string): string {
  const shipped = readFileSync(path.join(import.meta.dirname, '../../deploy/pgbouncer.ini'), 'utf8');
  const site: Record<string, string> = {
    '*': `host=${server.host} port=${server.port}`,
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: "''",
    auth_type: 'trust',
    auth_file: authFile,
  };
  return shipped
    .split('\n')
    .map((line) => {
      const name = /^([\w*]+)\s*=/.exec(line)?.[1];
      return name && name in site ? `${name} = ${site[name]}` : line;
    })
    .join('\n');
}

export async function startPgBouncer(
  server: { host: string; port: number },
  logins: Record<string, string>,
  options: { port?: number } = {},
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = options.port ?? (await freePort());
  const users = Object.entries(logins)
    .map(([u, p]) => `"${u}" "${p}"`)
    .join('\n');
  writeFileSync(path.join(dir, 'users.txt'), `${users}\n`, { mode: 0o644 });
  writeFileSync(path.join(dir, 'pgbouncer.ini'), siteConfig(server, port, path.join(dir, 'users.txt')), {
    mode: 0o644,
  });
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
