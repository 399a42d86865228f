// Brings a database to the point the app can use it: the embedded server when no DATABASE_URL is
// given (data kept in LEDGER_DATA_DIR, default ./.data), migrations applied as the owner, and the
// application login role (A3). Used by `npm start`, the worker, the bench and the browser tests.
import path from 'node:path';
import pg from 'pg';
import { env } from '../env.ts';
import { loadOrCreateCredentials, startEmbeddedPostgres, type EmbeddedServer } from './embedded.ts';
import { ensureAppLogin, withCredentials } from './roles.ts';
import { applyMigrations } from './schema-engine.ts';

export const APP_DATABASE = 'effect_ledger';
export const APP_LOGIN = 'ledger_app_login';

export interface ProvisionedDatabase {
  /** The app role's URL (what the app connects with). */
  appUrl: string;
  /** The owner's URL (migrations, tests that tamper). */
  ownerUrl: string;
  embedded: EmbeddedServer | null;
  appliedMigrations: string[];
  stop(): Promise<void>;
}

export interface ProvisionOptions {
  /** Folder for the embedded cluster and its credentials. */
  dataDir?: string;
  /** Embedded port (default EMBEDDED_POSTGRES_PORT, 54329). */
  port?: number;
  log?: (line: string) => void;
}

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

export async function provisionDatabase(options: ProvisionOptions = {}): Promise<ProvisionedDatabase> {
  const log = options.log ?? (() => {});
  const e = env();
  if (e.DATABASE_URL) {
    const ownerUrl = e.MIGRATION_DATABASE_URL ?? e.DATABASE_URL;
    log('using the PostgreSQL server named by DATABASE_URL');
    const appliedMigrations = await applyMigrations(ownerUrl);
    return { appUrl: e.DATABASE_URL, ownerUrl, embedded: null, appliedMigrations, stop: async () => {} };
  }
  const dataDir = path.resolve(options.dataDir ?? e.LEDGER_DATA_DIR);
  const port = options.port ?? e.EMBEDDED_POSTGRES_PORT;
  const creds = loadOrCreateCredentials(dataDir, port);
  log(`starting embedded PostgreSQL (data in ${path.relative(process.cwd(), dataDir) || dataDir}/pg, port ${port})`);
  const embedded = await startEmbeddedPostgres({
    dir: path.join(dataDir, 'pg'),
    port,
    password: creds.ownerPassword,
    persistent: true,
  });
  try {
    await ensureDatabase(embedded.ownerUrl(), APP_DATABASE);
    const ownerUrl = embedded.ownerUrl(APP_DATABASE);
    const appliedMigrations = await applyMigrations(ownerUrl);
    await ensureAppLogin(ownerUrl, APP_LOGIN, creds.appPassword);
    const appUrl = withCredentials(ownerUrl, APP_LOGIN, creds.appPassword);
    return { appUrl, ownerUrl, embedded, appliedMigrations, stop: () => embedded.stop() };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}
