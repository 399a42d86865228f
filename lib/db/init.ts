// `npm run db:init`: the roles and the database on a PostgreSQL server, before the first
// `npm run migrate`, with the least each role needs (docs/DEPLOYMENT.md, "First deployment").
// Run with an administrator's URL (a superuser, or a role with CREATEROLE and CREATEDB); idempotent:
// what exists is kept (a login's password only changes with resetPasswords).
//
//   owner (ledger_owner)        LOGIN, no superuser, no CREATEROLE, no CREATEDB; owns the database, so
//                               it owns what the migrations create. Holds ADMIN on ledger_app only,
//                               which the migrations need to make ledger_audit_signer a member of it.
//   ledger_app                  NOLOGIN group: the privileges the migrations grant the application.
//   ledger_audit_signer         NOLOGIN group: may store signed checkpoints and tree heads.
//   app login (ledger_app_login)       LOGIN, member of ledger_app: DATABASE_URL.
//   signer login (ledger_signer_login) LOGIN, member of ledger_audit_signer: AUDIT_SIGNER_DATABASE_URL.
//   database (effect_ledger)    owned by the owner; CONNECT only for these roles, not PUBLIC.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { APP_GROUP_ROLE, withCredentials } from './roles.ts';

export const AUDIT_SIGNER_GROUP_ROLE = 'ledger_audit_signer';

export interface InitOptions {
  adminUrl: string;
  database?: string;
  owner?: string;
  appLogin?: string;
  signerLogin?: string;
  /** Give existing logins new passwords (and print them); otherwise they are kept. */
  resetPasswords?: boolean;
  log?: (line: string) => void;
}

export interface InitResult {
  /** Connection URLs of the logins whose password was set by this run, by variable name. */
  urls: Partial<Record<'MIGRATION_DATABASE_URL' | 'DATABASE_URL' | 'AUDIT_SIGNER_DATABASE_URL', string>>;
  /** One line per thing done or found. */
  actions: string[];
}

const newPassword = () => randomBytes(24).toString('base64url');

export async function initDatabase(options: InitOptions): Promise<InitResult> {
  const database = options.database ?? 'effect_ledger';
  const owner = options.owner ?? 'ledger_owner';
  const appLogin = options.appLogin ?? 'ledger_app_login';
  const signerLogin = options.signerLogin ?? 'ledger_signer_login';
  const actions: string[] = [];
  const note = (line: string) => {
    actions.push(line);
    options.log?.(line);
  };
  const urls: InitResult['urls'] = {};
  const admin = new pg.Client({ connectionString: options.adminUrl });
  await admin.connect();
  try {
    const id = (name: string) => admin.escapeIdentifier(name);
    const version = Number((await admin.query<{ v: string }>('SHOW server_version_num')).rows[0]!.v);
    if (version < 150000)
      throw new Error(`PostgreSQL ${Math.floor(version / 10000)} is older than 15, the oldest supported`);
    const exists = async (role: string) =>
      ((await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).rowCount ?? 0) > 0;

    const ensureGroup = async (role: string) => {
      if (await exists(role)) return note(`role ${role}: exists, kept`);
      await admin.query(`CREATE ROLE ${id(role)} NOLOGIN`);
      note(`role ${role}: created (NOLOGIN group)`);
    };
    /** A login; returns its password when this run set one. */
    const ensureLogin = async (role: string, attributes: string, group?: string): Promise<string | undefined> => {
      let password: string | undefined;
      if (!(await exists(role))) {
        password = newPassword();
        await admin.query(`CREATE ROLE ${id(role)} LOGIN ${attributes} PASSWORD ${admin.escapeLiteral(password)}`);
        note(`role ${role}: created (LOGIN${group ? `, member of ${group}` : ''})`);
      } else if (options.resetPasswords) {
        password = newPassword();
        await admin.query(`ALTER ROLE ${id(role)} LOGIN PASSWORD ${admin.escapeLiteral(password)}`);
        note(`role ${role}: exists, new password set`);
      } else {
        note(`role ${role}: exists, kept (password unchanged)`);
      }
      if (group) await admin.query(`GRANT ${id(group)} TO ${id(role)}`);
      return password;
    };

    await ensureGroup(APP_GROUP_ROLE);
    await ensureGroup(AUDIT_SIGNER_GROUP_ROLE);
    const ownerPassword = await ensureLogin(owner, 'NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS');
    // PostgreSQL 16 separates ADMIN from membership: the owner may grant ledger_app, not act as it.
    await admin.query(
      version >= 160000
        ? `GRANT ${id(APP_GROUP_ROLE)} TO ${id(owner)} WITH ADMIN TRUE, INHERIT FALSE, SET FALSE`
        : `GRANT ${id(APP_GROUP_ROLE)} TO ${id(owner)} WITH ADMIN OPTION`,
    );
    note(`role ${owner}: may grant ${APP_GROUP_ROLE} (the migrations make ${AUDIT_SIGNER_GROUP_ROLE} a member)`);
    const appPassword = await ensureLogin(appLogin, 'NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT', APP_GROUP_ROLE);
    const signerPassword = await ensureLogin(
      signerLogin,
      'NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT',
      AUDIT_SIGNER_GROUP_ROLE,
    );

    const found = await admin.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1',
      [database],
    );
    if (!found.rowCount) {
      await admin.query(`CREATE DATABASE ${id(database)} OWNER ${id(owner)} ENCODING 'UTF8'`);
      note(`database ${database}: created, owned by ${owner}`);
    } else if (found.rows[0]!.owner !== owner) {
      await admin.query(`ALTER DATABASE ${id(database)} OWNER TO ${id(owner)}`);
      note(`database ${database}: exists, owner changed from ${found.rows[0]!.owner} to ${owner}`);
    } else {
      note(`database ${database}: exists, owned by ${owner}, kept`);
    }
    await admin.query(`REVOKE ALL ON DATABASE ${id(database)} FROM PUBLIC`);
    await admin.query(
      `GRANT CONNECT ON DATABASE ${id(database)} TO ${id(APP_GROUP_ROLE)}, ${id(AUDIT_SIGNER_GROUP_ROLE)}`,
    );
    note(`database ${database}: CONNECT for ${APP_GROUP_ROLE} and ${AUDIT_SIGNER_GROUP_ROLE} only (and its owner)`);

    const url = (user: string, password: string) => withCredentials(options.adminUrl, user, password, database);
    if (ownerPassword) urls.MIGRATION_DATABASE_URL = url(owner, ownerPassword);
    if (appPassword) urls.DATABASE_URL = url(appLogin, appPassword);
    if (signerPassword) urls.AUDIT_SIGNER_DATABASE_URL = url(signerLogin, signerPassword);
  } finally {
    await admin.end();
  }
  return { urls, actions };
}
