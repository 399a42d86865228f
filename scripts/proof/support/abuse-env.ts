// Shared set-up of the abuse proof parts (bad-input, security): one fresh database from the proof
// context wired into the product's two database seams (db() for the console guard and server
// actions, apiDb() for the agent API), one signed-in user per role, a way to call server actions
// as a given caller, and a fingerprint of every mutable table read as the owner.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { encode } from 'next-auth/jwt';
import { createDb, type Db } from '@/lib/db/client.ts';
import { setDb } from '@/lib/api/db.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { runWithRequest, type RequestInfo } from '@/lib/auth/request.ts';
import { mintSessionToken } from '@/lib/auth/session.ts';
import { authSecret } from '@/lib/auth/secret.ts';
import { insertUser } from '@/lib/auth/users.ts';
import type { Actor } from '@/lib/core/actor.ts';
import type { Role } from '@/lib/db/generated/enums.ts';
import type { ProofContext } from '../section.ts';

export const SYSTEM: Actor = { kind: 'system', id: 'proof', label: 'proof setup' };
export const HOST = 'console.test';
export const ROLE_LIST = ['admin', 'operator', 'support', 'auditor'] as const satisfies readonly Role[];
export type Who = Role | 'operator2';

export interface ProofUser {
  id: string;
  email: string;
  role: Role;
  sessionVersion: number;
  password: string;
}

export interface CallOptions {
  /** A raw cookie header instead of the user's valid session. */
  cookie?: string | null;
  origin?: string | null;
  secFetchSite?: string | null;
  requestId?: string;
  ip?: string;
}

export interface AbuseEnv {
  db: Db;
  appUrl: string;
  ownerUrl: string;
  owner<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  users: Record<Who, ProofUser>;
  /** A fresh user of a role (for checks that change the user: disable, re-role). */
  newUser(role: Role, prefix?: string): Promise<ProofUser>;
  cookieFor(user: { id: string; email: string; sessionVersion: number }): Promise<string>;
  /** A session cookie whose token expired a minute ago (signed with the real secret). */
  expiredCookieFor(user: { id: string; email: string; sessionVersion: number }): Promise<string>;
  /** Runs a server action as `who` (or with no session), through the product's own guard. */
  as<T>(who: Who | 'none', fn: () => Promise<T>, options?: CallOptions): Promise<T>;
  /** Row count and content hash of every table the app can change (refusal audit rows and a runtime key's last_used_at excluded). */
  fingerprint(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

type Holder = { __ledgerDb?: Db; __ledgerApiDb?: Db };

export async function openAbuseEnv(ctx: ProofContext, options: { poolSize?: number } = {}): Promise<AbuseEnv> {
  const { ownerUrl, appUrl } = await ctx.newDatabase();
  const db = createDb(appUrl, options.poolSize ?? 20);
  const ownerPool = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  const holder = globalThis as unknown as Holder;
  const saved = { db: holder.__ledgerDb, apiDb: holder.__ledgerApiDb, url: process.env.DATABASE_URL };
  process.env.DATABASE_URL = appUrl;
  if (!process.env.NEXTAUTH_SECRET) process.env.NEXTAUTH_SECRET = `proof-${randomUUID()}`;
  resetEnvCache();
  // The console's db() and the API's apiDb() both answer this database while the part runs.
  holder.__ledgerDb = db;
  setDb(db);

  const owner = async <T extends pg.QueryResultRow>(sql: string, params?: unknown[]) =>
    (await ownerPool.query<T>(sql, params as unknown[])).rows;
  const newUser = async (role: Role, prefix: string = role): Promise<ProofUser> => {
    const password = `pw-${randomUUID()}`;
    const u = await insertUser(
      db,
      { email: `${prefix}-${randomUUID().slice(0, 8)}@example.com`, name: prefix, role, password },
      SYSTEM,
    );
    return { id: u.id, email: u.email, role: u.role, sessionVersion: u.sessionVersion, password };
  };
  const users = {} as Record<Who, ProofUser>;
  for (const who of [...ROLE_LIST, 'operator2'] as const)
    users[who] = await newUser(who === 'operator2' ? 'operator' : who, who);

  const cookieFor = async (u: { id: string; email: string; sessionVersion: number }) =>
    `next-auth.session-token=${await mintSessionToken(u)}`;
  const expiredCookieFor = async (u: { id: string; email: string; sessionVersion: number }) =>
    `next-auth.session-token=${await encode({ token: { sub: u.id, uid: u.id, sv: u.sessionVersion, email: u.email }, secret: authSecret(), maxAge: -60 })}`;

  const as = async <T>(who: Who | 'none', fn: () => Promise<T>, o: CallOptions = {}): Promise<T> => {
    const cookie = o.cookie !== undefined ? o.cookie : who === 'none' ? null : await cookieFor(users[who]);
    const info: RequestInfo = {
      cookie,
      ip: o.ip ?? '203.0.113.9',
      userAgent: 'effect-ledger-proof',
      requestId: o.requestId ?? randomUUID(),
      origin: o.origin !== undefined ? o.origin : `https://${HOST}`,
      host: HOST,
      secFetchSite: o.secFetchSite !== undefined ? o.secFetchSite : 'same-origin',
    };
    return runWithRequest(info, fn);
  };

  const tables = (
    await owner<{ t: string }>(
      `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1`,
    )
  ).map((r) => r.t);
  const fingerprint = async () => {
    const parts = tables.map((t) => {
      const where =
        t === 'audit_entry'
          ? `WHERE x.outcome = 'ok'`
          : t === 'audit_chain_head'
            ? `WHERE x.chain NOT LIKE 'refused:%'`
            : t === 'audit_tree_pending'
              ? // The audit tree's queue holds every new entry's id, refusals' too: only those of kept entries count.
                `WHERE x.entry_id IN (SELECT id FROM audit_entry WHERE outcome = 'ok')`
              : '';
      // runtime_key.last_used_at is bookkeeping of authentication (touched at most once a minute): left out.
      const row = `(to_jsonb(x) - 'last_used_at')::text`;
      return `SELECT '${t}' AS t, count(*)::text || ':' || coalesce(md5(string_agg(${row}, '|' ORDER BY ${row})), '') AS f FROM "${t}" x ${where}`;
    });
    const rows = await owner<{ t: string; f: string }>(parts.join(' UNION ALL '));
    return Object.fromEntries(rows.map((r) => [r.t, r.f]));
  };

  const close = async () => {
    holder.__ledgerDb = saved.db;
    setDb(saved.apiDb);
    if (saved.url === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved.url;
    resetEnvCache();
    await db.$disconnect();
    await ownerPool.end();
  };

  return { db, appUrl, ownerUrl, owner, users, newUser, cookieFor, expiredCookieFor, as, fingerprint, close };
}

/** Names of the tables whose fingerprints differ. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys({ ...before, ...after }).filter((t) => before[t] !== after[t]);
}

export { rng } from './abuse-rng.ts';

/** Runs `fn` over `items` with at most `width` in flight, results in order. */
export async function pooled<T, R>(
  items: T[],
  width: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}
