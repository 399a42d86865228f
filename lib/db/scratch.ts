// A throwaway database: on DATABASE_URL's server when MIGRATION_DATABASE_URL is set, else on a
// temporary embedded PostgreSQL. Used by migrate:new; startThrowawayDatabase by the bench and the
// browser tests.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { env } from '../env.ts';
import { freePort, startEmbeddedPostgres } from './embedded.ts';
import { ensureAppLogin, withCredentials } from './roles.ts';
import { applyMigrations } from './schema-engine.ts';

export async function withScratchDatabase<T>(fn: (ownerUrl: string) => Promise<T>): Promise<T> {
  const external = env().MIGRATION_DATABASE_URL;
  if (external) {
    const name = `scratch_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(external);
      url.pathname = `/${name}`;
      return await fn(url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-scratch-'));
  chmodSync(dir, 0o755); // the postgres system user must reach it when we run as root
  const server = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    password: 'scratch',
    persistent: false,
    fsync: false,
  });
  try {
    return await fn(server.ownerUrl());
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ThrowawayDatabase {
  /** The temporary folder (the cluster lives in dir/pg); removed by stop(). */
  dir: string;
  ownerUrl: string;
  /** The app login role's URL (A3). */
  appUrl: string;
  stop(): Promise<void>;
}

/** A temporary embedded PostgreSQL with one migrated database and the app login role: what the
 *  benchmark and the browser tests run against. */
export async function startThrowawayDatabase(options: {
  name: string;
  appUser: string;
  fsync: boolean;
}): Promise<ThrowawayDatabase> {
  const dir = mkdtempSync(path.join(tmpdir(), `ledger-${options.name}-`));
  chmodSync(dir, 0o755); // the postgres system user must reach it when we run as root
  const server = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    password: options.name,
    persistent: false,
    fsync: options.fsync,
  });
  const stop = async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const admin = new pg.Client({ connectionString: server.ownerUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(options.name)}`);
    await admin.end();
    const ownerUrl = server.ownerUrl(options.name);
    await applyMigrations(ownerUrl);
    const appPassword = `${options.appUser}-password`;
    await ensureAppLogin(ownerUrl, options.appUser, appPassword);
    return { dir, ownerUrl, appUrl: withCredentials(ownerUrl, options.appUser, appPassword), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
