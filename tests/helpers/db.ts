// A fresh database per test file, cloned from the migrated template (fast: a file copy).
import { afterAll, inject } from 'vitest';
import pg from 'pg';
import { createDb, type Db } from '@/lib/db/client.ts';
import { withCredentials } from '@/lib/db/roles.ts';

export interface TestDatabase {
  name: string;
  /** The app role's client (what the product uses). */
  db: Db;
  appUrl: string;
  /** The owner's URL: for tamper tests and for checks the app role may not do. */
  ownerUrl: string;
  /** Runs SQL as the owner. */
  owner<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<T>>;
}

let counter = 0;

export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const ownerBase = inject('ownerUrl');
  const name = `t_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const admin = new pg.Client({ connectionString: ownerBase });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDb')}`);
  await admin.end();
  const ownerUrl = withDb(ownerBase, name);
  const appUrl = withCredentials(ownerUrl, inject('appUser'), inject('appPassword'));
  const db = createDb(appUrl, options.poolSize ?? 60);
  const ownerPool = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  afterAll(async () => {
    await db.$disconnect();
    await ownerPool.end();
    const drop = new pg.Client({ connectionString: ownerBase });
    await drop.connect();
    await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await drop.end();
  });
  return {
    name,
    db,
    appUrl,
    ownerUrl,
    owner: (sql, params) => ownerPool.query(sql, params as unknown[]),
  };
}

function withDb(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
