// Writes a new migration from the difference between the migrations folder and schema.prisma.
// Usage: npm run migrate:new -- <name>. Needs a scratch database: uses an embedded PostgreSQL.
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { withScratchDatabase } from '../lib/db/scratch.ts';
import { applyMigrations, diffDatabaseToSchema, MIGRATIONS_DIR } from '../lib/db/schema-engine.ts';

const name = (process.argv[2] ?? '').replace(/[^a-z0-9_]/gi, '_').toLowerCase();
if (!name) {
  console.error('usage: npm run migrate:new -- <name>');
  process.exit(2);
}

await withScratchDatabase(async (ownerUrl) => {
  console.log('applying existing migrations to a scratch database...');
  await applyMigrations(ownerUrl);
  const sql = await diffDatabaseToSchema(ownerUrl);
  if (!sql.trim() || /^-- This is an empty migration/m.test(sql)) {
    console.log('schema.prisma matches the migrations: nothing to write.');
    return;
  }
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
  if (existsSync(dir)) throw new Error(`${dir} exists`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'migration.sql'), sql);
  console.log(`wrote ${path.relative(process.cwd(), dir)}/migration.sql; add grants for new tables if needed.`);
});
