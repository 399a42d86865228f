// What a production process checks before it serves anything: the variables it cannot run without,
// and a database whose migrations match the code. `npm run start:prod` and the worker refuse to start
// when either is wrong; GET /readyz reports the same migration check as 503 while it lasts.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { unsetVariables } from '../env.ts';

/** Variables production cannot default, each with what it is (printed when it is missing). */
export const PRODUCTION_VARIABLES = {
  DATABASE_URL: "the application role's connection, e.g. postgres://ledger_app:...@db:5432/ledger",
  NEXTAUTH_SECRET: 'the session signing secret (32 random bytes, e.g. `openssl rand -base64 32`)',
  NEXTAUTH_URL: 'the public URL of the console, e.g. https://ledger.example.com',
} as const;

export type ProductionVariable = keyof typeof PRODUCTION_VARIABLES;

/** One line per missing (unset or blank) production variable, naming it and saying what it is. */
export function missingVariables(): string[] {
  return unsetVariables(Object.keys(PRODUCTION_VARIABLES) as ProductionVariable[]).map(
    (name) => `${name} is not set: ${PRODUCTION_VARIABLES[name]} (see .env.example)`,
  );
}

/** Migration folder names the code was built with, oldest first (what `npm run migrate` applies). */
export function migrationNames(dir = path.resolve('prisma/migrations')): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort();
}

/**
 * The migrations of this build that the database has not finished applying, oldest first. Reads
 * Prisma's bookkeeping table (the app role may read it); a database without that table has every
 * migration pending. Throws when the database cannot be reached.
 */
export async function pendingMigrations(connectionString: string, names = migrationNames()): Promise<string[]> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await pendingMigrationsWith(async (sql) => (await client.query(sql)).rows, names);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The same check on a connection the caller already has (GET /readyz uses the app's pool). */
export async function pendingMigrationsWith(
  query: (sql: string) => Promise<Record<string, unknown>[]>,
  names = migrationNames(),
): Promise<string[]> {
  const [table] = await query(`SELECT to_regclass('public._prisma_migrations') IS NOT NULL AS present`);
  if (!table?.present) return names;
  const done = await query(
    `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
  );
  const applied = new Set(done.map((r) => String(r.migration_name)));
  return names.filter((n) => !applied.has(n));
}

/** The refusal printed for pending migrations: which ones, and the command that applies them. */
export function pendingMigrationsMessage(pending: string[]): string {
  const list =
    pending.length > 3 ? `${pending.slice(0, 3).join(', ')} and ${pending.length - 3} more` : pending.join(', ');
  return (
    `the database is missing ${pending.length} migration${pending.length === 1 ? '' : 's'} of this build (${list}); ` +
    'apply them with `npm run migrate` (MIGRATION_DATABASE_URL set to the owner role), then start again'
  );
}
