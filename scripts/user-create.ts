// `npm run user:create -- --email ana@example.com --role operator [--name "Ana"] [--password ...]`
// Adds a console user. Without --password a one-time password is generated and printed once.
// Uses DATABASE_URL when set; otherwise the embedded server of `npm start` (running or not).
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generatePassword } from '../lib/auth/password.ts';
import { ROLES } from '../lib/auth/permissions.ts';
import { insertUser } from '../lib/auth/users.ts';
import { createDb } from '../lib/db/client.ts';
import { loadOrCreateCredentials } from '../lib/db/embedded.ts';
import { APP_DATABASE, APP_LOGIN, provisionDatabase } from '../lib/db/provision.ts';
import { env } from '../lib/env.ts';
import { LedgerError } from '../lib/core/errors.ts';

const { values } = parseArgs({
  options: {
    email: { type: 'string' },
    role: { type: 'string' },
    name: { type: 'string' },
    password: { type: 'string' },
  },
});
if (!values.email || !values.role || !(ROLES as readonly string[]).includes(values.role)) {
  console.error(
    `usage: npm run user:create -- --email <email> --role <${ROLES.join('|')}> [--name <name>] [--password <password>]`,
  );
  process.exit(2);
}

async function appUrl(): Promise<{ url: string; stop: () => Promise<void> }> {
  if (env().DATABASE_URL) return { url: env().DATABASE_URL!, stop: async () => {} };
  const dataDir = path.resolve(env().LEDGER_DATA_DIR);
  const creds = loadOrCreateCredentials(dataDir, 54329);
  const running = `postgresql://${APP_LOGIN}:${encodeURIComponent(creds.appPassword)}@127.0.0.1:${creds.port}/${APP_DATABASE}`;
  const probe = new pg.Client({ connectionString: running });
  try {
    await probe.connect();
    await probe.end();
    return { url: running, stop: async () => {} };
  } catch {
    const db = await provisionDatabase();
    return { url: db.appUrl, stop: db.stop };
  }
}

const password = values.password ?? generatePassword();
const target = await appUrl();
const db = createDb(target.url, 2);
try {
  const user = await insertUser(
    db,
    {
      email: values.email,
      name: values.name ?? values.email.split('@')[0]!,
      role: values.role as (typeof ROLES)[number],
      password,
    },
    { kind: 'system', id: 'user-create', label: 'npm run user:create' },
    // Whoever ran the command knows the password: the person chooses their own at first sign-in (Z7).
    { mustChangePassword: true },
  );
  console.log(`created ${user.email} (${user.role}); a new password is asked for at first sign-in`);
  if (!values.password) console.log(`one-time password: ${password}`);
} catch (error) {
  console.error(
    error instanceof LedgerError
      ? `${error.details.field ?? ''}: ${error.message}`
      : error instanceof Error && /Unique constraint/.test(error.message)
        ? `a user with email ${values.email} already exists`
        : error,
  );
  process.exitCode = 1;
} finally {
  await db.$disconnect();
  await target.stop();
}
