// A throwaway database: on DATABASE_URL's server when MIGRATION_DATABASE_URL is set, else on a
// temporary embedded PostgreSQL. Used by migrate:new and the schema-drift test.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from './embedded.ts';

export async function withScratchDatabase<T>(fn: (ownerUrl: string) => Promise<T>): Promise<T> {
  const external = process.env.MIGRATION_DATABASE_URL;
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
  const server = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort(), password: 'scratch', persistent: false, fsync: false });
  try {
    return await fn(server.ownerUrl());
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
