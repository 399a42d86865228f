// `npm run migrate`: applies pending migrations (what `prisma migrate deploy` does, offline) as the
// owner: MIGRATION_DATABASE_URL, else DATABASE_URL; to the embedded server in .data only when neither
// is set, and never under NODE_ENV=production (exit 1 naming the variable instead). Then installs the
// replay job engine's schema (pg-boss), so no worker needs the owner's URL.
// `npm run migrate -- --rolled-back <name>`: after a migration failed and its cause was fixed, records
// it as rolled back so the next `npm run migrate` applies it again (`prisma migrate resolve`). Each
// migration runs as one transaction, so a failed one left nothing of itself behind.
import { parseArgs } from 'node:util';
import { provisionDatabase, type ProvisionedDatabase } from '../lib/db/provision.ts';
import { markRolledBack } from '../lib/db/schema-engine.ts';
import { env } from '../lib/env.ts';
import { installJobEngine } from '../lib/replay/index.ts';

const say = (line: string) => console.log(`[migrate] ${line}`);
const fail = (line: string): never => {
  console.error(`[migrate] ${line}`);
  process.exit(1);
};
const { values } = parseArgs({ options: { 'rolled-back': { type: 'string' } } });

/** The engine's words without its internal trace, then what to do next when a migration failed
 *  (now, or on an earlier run: the engine then refuses until it is resolved). */
function recoveryAdvice(message: string): string {
  const words = message.split(/\n\s+0: /)[0]!.trimEnd();
  const name = /migration_name="(\d{14}_\w+)"/.exec(message)?.[1] ?? /`(\d{14}_\w+)`/.exec(message)?.[1];
  if (!name) return words;
  return `${words}\nMigration ${name} failed. It ran in one transaction, so nothing of it was applied. Fix the cause (the error above), then run \`npm run migrate -- --rolled-back ${name}\` and \`npm run migrate\` again (docs/DEPLOYMENT.md, "When a migration fails").`;
}

const rolledBack = values['rolled-back'];
if (rolledBack) {
  const e = env();
  const ownerUrl = e.MIGRATION_DATABASE_URL ?? e.DATABASE_URL;
  if (!ownerUrl)
    fail('MIGRATION_DATABASE_URL (or DATABASE_URL) is not set: which database holds the failed migration?');
  try {
    await markRolledBack(ownerUrl!, rolledBack);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  say(`${rolledBack} is recorded as rolled back: \`npm run migrate\` applies it again`);
  process.exit(0);
}

let database: ProvisionedDatabase;
try {
  database = await provisionDatabase({ log: say });
} catch (error) {
  fail(recoveryAdvice(error instanceof Error ? error.message : String(error)));
}
try {
  const applied = database!.appliedMigrations;
  say(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
  await installJobEngine(database!.ownerUrl);
  say('the replay job engine (pg-boss) is installed');
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
} finally {
  await database!.stop();
}
