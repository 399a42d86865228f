// Personal access tokens for the management API (docs/MANAGE.md): `elp_<prefix>_<secret>`. A token
// is its person: the guard reads the person and their grants afresh on every use, so a grant taken
// away, a disabled account, a revocation or the expiry counts at the very next call. Only the SHA-256
// of the whole token is stored; the token itself is shown once, at creation. Creation, revocation
// and every use are audited (A1).
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import type { Db, DbOrTx } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { notFound } from '../core/errors.ts';
import { hashToken, newBearerToken } from '../runtime-keys/index.ts';
import type { SessionUser } from './session.ts';

const TOKEN = /^elp_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
/** The longest a token may live: a year, so none is forgotten for good. */
export const MAX_TOKEN_DAYS = 366;

export const createAccessTokenInput = z.strictObject({
  name: z.string().trim().min(1, 'name the token (what uses it)').max(128),
  expiresInDays: z.coerce
    .number()
    .int('a whole number of days')
    .min(1, 'at least one day')
    .max(MAX_TOKEN_DAYS, `at most ${MAX_TOKEN_DAYS} days`),
});

export const revokeAccessTokenInput = z.strictObject({ tokenId: z.uuid('a token id') });

type Ctx = { db: Db; actor: Actor & { kind: 'user' }; request?: RequestMeta };

export interface CreatedAccessToken {
  id: string;
  name: string;
  prefix: string;
  expiresAt: Date;
  /** Shown once; only its hash is kept. */
  token: string;
}

export function accessTokenPrefix(token: string): string | null {
  return TOKEN.exec(token)?.[1] ?? null;
}

/** Whether a bearer credential is shaped as a personal access token (not a runtime key). */
export const isAccessToken = (bearer: string): boolean => bearer.startsWith('elp_');

export async function createAccessToken(
  ctx: Ctx,
  input: z.output<typeof createAccessTokenInput>,
): Promise<CreatedAccessToken> {
  const { prefix, token } = newBearerToken('elp');
  const expiresAt = new Date(Date.now() + input.expiresInDays * 86_400_000);
  return ctx.db.$transaction(async (tx) => {
    const row = await tx.accessToken.create({
      data: { userId: ctx.actor.id, name: input.name, prefix, secretHash: hashToken(token), expiresAt },
    });
    await appendAudit(tx, {
      chain: `access_token:${row.id}`,
      actor: ctx.actor,
      action: 'access_token.create',
      subjectType: 'access_token',
      subjectId: row.id,
      after: 'active',
      detail: { name: input.name, prefix, expiresAt: expiresAt.toISOString() },
      request: ctx.request,
    });
    return { id: row.id, name: row.name, prefix, expiresAt, token };
  });
}

/** A person revokes their own tokens; an admin (users.manage) anyone's. Revoking twice is refused. */
export async function revokeAccessToken(
  ctx: Ctx & { mayManageUsers: boolean },
  input: z.output<typeof revokeAccessTokenInput>,
): Promise<{ revoked: true }> {
  return ctx.db.$transaction(async (tx) => {
    const row = await tx.accessToken.findUnique({ where: { id: input.tokenId } });
    if (!row || (row.userId !== ctx.actor.id && !ctx.mayManageUsers))
      throw notFound(`no access token ${input.tokenId}`, { field: 'tokenId' });
    // Conditional, so two revocations racing on one token revoke and audit it once.
    const revoked = await tx.accessToken.updateMany({
      where: { id: row.id, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (revoked.count === 0) throw notFound(`access token "${row.name}" is already revoked`, { field: 'tokenId' });
    await appendAudit(tx, {
      chain: `access_token:${row.id}`,
      actor: ctx.actor,
      action: 'access_token.revoke',
      subjectType: 'access_token',
      subjectId: row.id,
      before: 'active',
      after: 'revoked',
      detail: { name: row.name, prefix: row.prefix, owner: row.userId },
      request: ctx.request,
    });
    return { revoked: true as const };
  });
}

/** A person's tokens, newest first, without anything secret, each saying whether it has expired. */
export async function listAccessTokens(db: DbOrTx, userId: string) {
  const rows = await db.accessToken.findMany({
    where: { userId },
    orderBy: { createdAt: 'desc' },
    select: { id: true, name: true, prefix: true, createdAt: true, expiresAt: true, revokedAt: true, lastUsedAt: true },
  });
  const now = Date.now();
  return rows.map((r) => ({ ...r, expired: r.expiresAt.getTime() <= now }));
}

export type TokenProblem = 'malformed_token' | 'unknown_token' | 'token_expired' | 'token_revoked' | 'disabled';

export const TOKEN_PROBLEMS: Record<TokenProblem, string> = {
  malformed_token: 'malformed access token (expected elp_<prefix>_<secret>)',
  unknown_token: 'access token not accepted (unknown token or wrong secret)',
  token_expired: 'this access token has expired: create a new one at /account/tokens',
  token_revoked: 'this access token was revoked',
  disabled: 'this account is disabled',
};

const NO_SUCH_HASH = Buffer.alloc(32);

/**
 * The person a token acts as, read from the database with their grants on every call (never cached:
 * a revoked token or a disabled person is refused at once). `tokenId` names the token whenever its
 * prefix is known, so its use can be audited even when it is refused.
 */
export async function personFromAccessToken(
  database: DbOrTx,
  bearer: string,
): Promise<
  | { user: SessionUser; problem: null; tokenId: string }
  | { user: SessionUser | null; problem: TokenProblem; tokenId: string | null }
> {
  const prefix = accessTokenPrefix(bearer);
  if (!prefix) return { user: null, problem: 'malformed_token', tokenId: null };
  const row = await database.accessToken.findUnique({
    where: { prefix },
    select: {
      id: true,
      secretHash: true,
      expiresAt: true,
      revokedAt: true,
      lastUsedAt: true,
      user: {
        select: {
          id: true,
          email: true,
          name: true,
          role: true,
          disabled: true,
          mustChangePassword: true,
          grants: { select: { role: true, workflow: true }, orderBy: [{ workflow: 'asc' }, { role: 'asc' }] },
        },
      },
    },
  });
  // Compared in constant time even when no row exists: an unknown prefix and a wrong secret look alike.
  const a = Buffer.from(hashToken(bearer), 'hex');
  const b = row ? Buffer.from(row.secretHash, 'hex') : NO_SUCH_HASH;
  const matches = a.length === b.length && timingSafeEqual(a, b);
  if (!row || !matches) return { user: null, problem: 'unknown_token', tokenId: null };
  const { disabled, ...user } = row.user;
  const problem: TokenProblem | null = row.revokedAt
    ? 'token_revoked'
    : row.expiresAt.getTime() <= Date.now()
      ? 'token_expired'
      : disabled
        ? 'disabled'
        : null;
  if (problem) return { user, problem, tokenId: row.id };
  // Last use is written at most once a minute per token: the audit trail holds every use.
  if (!row.lastUsedAt || row.lastUsedAt.getTime() < Date.now() - 60_000) {
    await database.accessToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  }
  return { user, problem: null, tokenId: row.id };
}

/** One call through a token, on the token's own chain: what was called and how it was answered. */
export async function recordAccessTokenUse(
  db: DbOrTx,
  use: { tokenId: string; actor: Actor; request: RequestMeta; method: string; path: string; status: number },
): Promise<void> {
  await appendAudit(db, {
    chain: `access_token:${use.tokenId}`,
    actor: use.actor,
    action: 'access_token.use',
    subjectType: 'access_token',
    subjectId: use.tokenId,
    outcome: use.status < 400 ? 'ok' : 'refused',
    detail: { method: use.method, path: use.path, status: use.status },
    request: use.request,
  });
}
