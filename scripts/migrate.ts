// `npm run migrate`: applies pending migrations (what `prisma migrate deploy` does, offline) to
// MIGRATION_DATABASE_URL, or to the embedded server in .data when no URL is set.
import { provisionDatabase } from '../lib/db/provision.ts';

const database = await provisionDatabase({ log: (line) => console.log(`[migrate] ${line}`) });
try {
  const applied = database.appliedMigrations;
  console.log(applied.length ? `[migrate] applied: ${applied.join(', ')}` : '[migrate] the database is up to date');
} finally {
  await database.stop();
}
