// The application login role (A3): a member of ledger_app (created by the migrations), never the
// owner of any table. Used for the embedded server and for test databases.
import pg from 'pg';

export const APP_GROUP_ROLE = 'ledger_app';

export async function ensureAppLogin(ownerUrl: string, user: string, password: string): Promise<void> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [user]);
    const ident = client.escapeIdentifier(user);
    const secret = client.escapeLiteral(password);
    if (exists.rowCount === 0) {
      await client.query(`CREATE ROLE ${ident} LOGIN PASSWORD ${secret} IN ROLE ${APP_GROUP_ROLE}`);
    } else {
      await client.query(`ALTER ROLE ${ident} LOGIN PASSWORD ${secret}`);
      await client.query(`GRANT ${APP_GROUP_ROLE} TO ${ident}`);
    }
  } finally {
    await client.end();
  }
}

/** The same URL with another user, password and/or database. */
export function withCredentials(url: string, user: string, password: string, database?: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = encodeURIComponent(password);
  if (database) u.pathname = `/${database}`;
  return u.toString();
}
