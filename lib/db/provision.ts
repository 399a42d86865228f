// Brings a database to the point the app can use it: migrations applied as the owner and, on the
// embedded server, the application login role (A3). A server named by MIGRATION_DATABASE_URL or
// DATABASE_URL is used when either is set (the owner is MIGRATION_DATABASE_URL, else DATABASE_URL);
// the embedded server only when neither is (data kept in LEDGER_DATA_DIR, default ./.data), and never
// under NODE_ENV=production, where migrating a throwaway local database and exiting 0 would hide a
// missing variable. Used by `npm start`, `npm run migrate` and the other CLI scripts.
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
  const ownerUrl = e.MIGRATION_DATABASE_URL ?? e.DATABASE_URL;
  if (ownerUrl) {
    log(`using the PostgreSQL server named by ${e.MIGRATION_DATABASE_URL ? 'MIGRATION_DATABASE_URL' : 'DATABASE_URL'}`);
    const appliedMigrations = await applyMigrations(ownerUrl);
    // With the owner's URL alone (`npm run migrate`), the owner is also what the app connects as.
    const appUrl = e.DATABASE_URL ?? ownerUrl;
    return { appUrl, ownerUrl, embedded: null, appliedMigrations, stop: async () => {} };
  }
  if (e.NODE_ENV === 'production') {
    throw new Error(
      'MIGRATION_DATABASE_URL (or DATABASE_URL) is not set: under NODE_ENV=production no embedded database is started',
    );
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
