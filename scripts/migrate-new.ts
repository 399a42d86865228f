// Writes a new migration: the difference between the migrations folder and schema.prisma, then each
// function file of prisma/sql/functions that differs from what the migrations define.
// Usage: npm run migrate:new -- <name>. Needs a scratch database: uses an embedded PostgreSQL.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { draftMigration } from '../lib/db/migration-draft.ts';
import { withScratchDatabase } from '../lib/db/scratch.ts';
import { applyMigrations, MIGRATIONS_DIR } from '../lib/db/schema-engine.ts';

const name = (process.argv[2] ?? '').replace(/[^a-z0-9_]/gi, '_').toLowerCase();
if (!name) {
  console.error('usage: npm run migrate:new -- <name>');
  process.exit(2);
}

await withScratchDatabase(async (ownerUrl) => {
  console.log('applying existing migrations to a scratch database...');
  await applyMigrations(ownerUrl);
  const draft = await draftMigration(ownerUrl);
  const { problems, unfiled, misnamed } = draft.report;
  for (const line of misnamed) console.warn(`warning: ${line}`);
  for (const identity of unfiled) {
    console.warn(`warning: no file in prisma/sql/functions defines ${identity} (dropping it is written by hand)`);
  }
  if (problems.length) {
    for (const line of problems) console.error(`error: prisma/sql/functions/${line}`);
    process.exitCode = 1;
    return;
  }
  if (!draft.sql) {
    console.log('schema.prisma and prisma/sql/functions match the migrations: nothing to write.');
    return;
  }
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
  if (existsSync(dir)) throw new Error(`${dir} exists`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'migration.sql'), draft.sql);
  for (const v of draft.functions) console.log(`function ${v.identity}: ${v.status} (${v.file})`);
  console.log(
    `wrote ${path.relative(process.cwd(), dir)}/migration.sql; add grants for new tables and functions if needed.`,
  );
});
