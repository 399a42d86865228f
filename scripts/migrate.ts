// `npm run migrate`: applies pending migrations (what `prisma migrate deploy` does, offline) as the
// owner: MIGRATION_DATABASE_URL, else DATABASE_URL; to the embedded server in .data only when neither
// is set, and never under NODE_ENV=production (exit 1 naming the variable instead).
import { provisionDatabase, type ProvisionedDatabase } from '../lib/db/provision.ts';

let database: ProvisionedDatabase;
try {
  database = await provisionDatabase({ log: (line) => console.log(`[migrate] ${line}`) });
} catch (error) {
  console.error(`[migrate] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
try {
  const applied = database.appliedMigrations;
  console.log(applied.length ? `[migrate] applied: ${applied.join(', ')}` : '[migrate] the database is up to date');
} finally {
  await database.stop();
}
