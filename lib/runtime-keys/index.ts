// Per-runtime API keys (Z6): `elk_<prefix>_<secret>`. Only the SHA-256 of the whole token is stored;
// the token is returned once, at creation. Scoped to workflows ("*" = all). Creation and revocation
// are audited (A1) in the same transaction as the change.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import { sqlRows, type DbOrTx, type Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { may, whoMay } from '../core/permissions.ts';
import { forbidden, LedgerError, notFound } from '../core/errors.ts';
import { parseInput } from '../ledger/validate.ts';

const TOKEN = /^elk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const LAST_USED_EVERY_MS = 60_000;

export const createRuntimeKeyInput = z.strictObject({
  name: z.string().trim().min(1).max(128),
  workflows: z.array(z.string().trim().min(1).max(128)).min(1).max(100),
});

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new bearer credential, `<kind>_<prefix>_<secret>`: the prefix (12 lowercase letters and digits)
 *  finds the row, the 256-bit secret is stored only as hashToken's digest. `elk` is a runtime key,
 *  `elp` a personal access token. */
export function newBearerToken(kind: 'elk' | 'elp'): { prefix: string; token: string } {
  const prefix = randomBytes(9)
    .toString('base64url')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '0')
    .slice(0, 12)
    .padEnd(12, '0');
  return { prefix, token: `${kind}_${prefix}_${randomBytes(32).toString('base64url')}` };
}

export interface CreatedRuntimeKey {
  id: string;
  name: string;
  prefix: string;
  workflows: string[];
  /** Shown once; not recoverable. */
  token: string;
}

export async function createRuntimeKey(
  ctx: { db: Db; actor: Actor; request?: RequestMeta },
  raw: unknown,
): Promise<CreatedRuntimeKey> {
  const input = parseInput(createRuntimeKeyInput, raw);
  if (!may(ctx.actor, 'runtime_keys.manage'))
    throw forbidden(`only ${whoMay('runtime_keys.manage')} creates runtime keys`);
  const { prefix, token } = newBearerToken('elk');
  return ctx.db.$transaction(async (tx) => {
    const row = await tx.runtimeKey.create({
      data: {
        name: input.name,
        prefix,
        secretHash: hashToken(token),
        workflows: input.workflows,
        createdById: ctx.actor.kind === 'user' ? ctx.actor.id : null,
      },
    });
    await appendAudit(tx, {
      chain: `runtime_key:${row.id}`,
      actor: ctx.actor,
      action: 'runtime_key.create',
      subjectType: 'runtime_key',
      subjectId: row.id,
      after: 'active',
      detail: { name: input.name, prefix, workflows: input.workflows },
      request: ctx.request,
    });
    return { id: row.id, name: row.name, prefix, workflows: row.workflows, token };
  });
}

export async function revokeRuntimeKey(
  ctx: { db: Db; actor: Actor; request?: RequestMeta },
  id: string,
  reason: string,
): Promise<void> {
  if (!may(ctx.actor, 'runtime_keys.manage'))
    throw forbidden(`only ${whoMay('runtime_keys.manage')} revokes runtime keys`);
  if (!reason.trim()) throw new LedgerError('validation', 'a reason is required', { field: 'reason' });
  await ctx.db.$transaction(async (tx) => {
    const updated = await tx.runtimeKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (updated.count !== 1) throw notFound(`no active runtime key ${id}`, { field: 'id' });
    await appendAudit(tx, {
      chain: `runtime_key:${id}`,
      actor: ctx.actor,
      action: 'runtime_key.revoke',
      subjectType: 'runtime_key',
      subjectId: id,
      before: 'active',
      after: 'revoked',
      reason: reason.trim(),
      request: ctx.request,
    });
  });
}

/** A refusal carries two texts: `why` for the audit trail (which check failed) and `told`, what the
 *  caller reads. An unknown prefix and a wrong secret tell the caller the same thing, or a caller
 *  could learn which prefixes exist by trying them. */
export type VerifiedKey =
  | { ok: true; actor: Extract<Actor, { kind: 'runtime' }> }
  | { ok: false; why: string; told: string; prefix: string | null };

/** What a caller reads for an unknown key and for a wrong secret alike. */
export const KEY_NOT_ACCEPTED = 'runtime key not accepted (unknown key or wrong secret)';
// Compared against when no row exists, so an unknown prefix does the same hashing and constant-time
// comparison as a known one (the same timing class as a wrong secret).
const NO_SUCH_HASH = Buffer.alloc(32);

/** A runtime key's row as the checks read it. */
export interface RuntimeKeyRow {
  id: string;
  name: string;
  secret_hash: string;
  workflows: string[];
  revoked_at: Date | null;
  last_used_at: Date | null;
}

/** The columns of RuntimeKeyRow, for statements that read a key together with something else. */
export const RUNTIME_KEY_COLUMNS = 'id::text AS id, name, secret_hash, workflows, revoked_at, last_used_at';

/** The prefix of a well-formed token, or null (a malformed token is refused before any query). */
export function runtimeKeyPrefix(token: string): string | null {
  return TOKEN.exec(token)?.[1] ?? null;
}

/** Checks a presented token against its key's row: hash match (constant time), not revoked. */
export function checkRuntimeKey(row: RuntimeKeyRow | undefined, token: string): VerifiedKey {
  const prefix = runtimeKeyPrefix(token);
  if (!prefix) {
    const why = 'malformed runtime key (expected elk_<prefix>_<secret>)';
    return { ok: false, why, told: why, prefix: null };
  }
  const a = Buffer.from(hashToken(token), 'hex');
  const b = row ? Buffer.from(row.secret_hash, 'hex') : NO_SUCH_HASH;
  const matches = a.length === b.length && timingSafeEqual(a, b);
  if (!row) return { ok: false, why: 'unknown runtime key', told: KEY_NOT_ACCEPTED, prefix };
  if (!matches) return { ok: false, why: 'runtime key secret does not match', told: KEY_NOT_ACCEPTED, prefix };
  if (row.revoked_at) {
    const why = `runtime key "${row.name}" was revoked`;
    return { ok: false, why, told: why, prefix };
  }
  return { ok: true, actor: { kind: 'runtime', id: row.id, label: `runtime:${row.name}`, workflows: row.workflows } };
}

/** Last use is recorded at most once a minute per key: only a request that finds it older writes
 *  (the WHERE keeps concurrent requests from writing it twice). */
export async function noteRuntimeKeyUse(db: DbOrTx, row: RuntimeKeyRow): Promise<void> {
  if (row.last_used_at && row.last_used_at.getTime() >= Date.now() - LAST_USED_EVERY_MS) return;
  await db.runtimeKey.updateMany({
    where: {
      id: row.id,
      OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(Date.now() - LAST_USED_EVERY_MS) } }],
    },
    data: { lastUsedAt: new Date() },
  });
}

/** Checks a presented token: format, known prefix, hash match (constant time), not revoked. */
export async function verifyRuntimeKey(db: DbOrTx, token: string): Promise<VerifiedKey> {
  const prefix = runtimeKeyPrefix(token);
  if (!prefix) return checkRuntimeKey(undefined, token);
  const [row] = await sqlRows<RuntimeKeyRow>(
    db,
    `SELECT ${RUNTIME_KEY_COLUMNS} FROM runtime_key WHERE prefix = $1`,
    [prefix],
    'runtime_key_by_prefix',
  );
  const verified = checkRuntimeKey(row, token);
  if (verified.ok) await noteRuntimeKeyUse(db, row!);
  return verified;
}
