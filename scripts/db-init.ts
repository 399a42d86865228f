// `npm run --silent db:init -- --admin <url> [--database effect_ledger] [--owner ledger_owner]
//  [--app-login ledger_app_login] [--signer-login ledger_signer_login] [--reset-passwords]`
// Creates the roles and the database the ledger needs on a PostgreSQL server (lib/db/init.ts), as an
// administrator; idempotent. What it does goes to stderr, one line each; stdout gets only the
// connection variables of the logins whose password it set, as NAME=url lines for an env file
// (a second run sets none and prints none, unless --reset-passwords).
import { parseArgs } from 'node:util';
import { initDatabase } from '../lib/db/init.ts';

const { values } = parseArgs({
  options: {
    admin: { type: 'string' },
    database: { type: 'string' },
    owner: { type: 'string' },
    'app-login': { type: 'string' },
    'signer-login': { type: 'string' },
    'reset-passwords': { type: 'boolean', default: false },
  },
});
if (!values.admin) {
  process.stderr.write(
    'usage: npm run --silent db:init -- --admin <administrator URL> [--database <name>] [--owner <role>] ' +
      '[--app-login <role>] [--signer-login <role>] [--reset-passwords]\n',
  );
  process.exit(2);
}
try {
  const { urls } = await initDatabase({
    adminUrl: values.admin,
    database: values.database,
    owner: values.owner,
    appLogin: values['app-login'],
    signerLogin: values['signer-login'],
    resetPasswords: values['reset-passwords'],
    log: (line) => process.stderr.write(`[db:init] ${line}\n`),
  });
  for (const [name, url] of Object.entries(urls)) process.stdout.write(`${name}=${url}\n`);
  const printed = Object.keys(urls);
  process.stderr.write(
    printed.length
      ? `[db:init] done; printed ${printed.join(', ')} (keep them secret; the next step is \`npm run migrate\`)\n`
      : '[db:init] done; no password was set, so no URL was printed (--reset-passwords sets new ones)\n',
  );
} catch (error) {
  process.stderr.write(`[db:init] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
