// A person chooses their own password (Z7). Required before anything else when the password was
// chosen or seen by someone else (the first admin's one-time password, `npm run user:create`, a user
// an admin added), and open to anyone signed in. The change bumps session_version, which ends every
// session of the person, the current one included: they sign in again with the new password. Wrong
// current passwords count toward the failed sign-in limit (Z4); a wrong or rate-limited attempt is
// audited as refused (A4).
import { z } from 'zod';
import { appendAudit, auditRefusal } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { invalid, LedgerError, notFound } from '../core/errors.ts';
import { parseInput } from '../ledger/validate.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { beginAttempt, clearFailures, WINDOW_MINUTES } from './rate-limit.ts';
import { passwordField } from './users.ts';
import { forgetCachedSessions } from './session-cache.ts';

export const changePasswordInput = z
  .strictObject({
    currentPassword: z.string().min(1, 'enter your current password').max(200),
    newPassword: passwordField,
    confirmPassword: z.string().max(200),
  })
  .refine((v) => v.newPassword === v.confirmPassword, {
    path: ['confirmPassword'],
    message: 'the two new passwords differ',
  })
  .refine((v) => v.newPassword !== v.currentPassword, {
    path: ['newPassword'],
    message: 'choose a password different from the current one',
  });

interface Ctx {
  db: Db;
  actor: Actor & { kind: 'user' };
  request?: RequestMeta;
}

export async function changePassword(ctx: Ctx, raw: unknown): Promise<{ id: string }> {
  const input = parseInput(changePasswordInput, raw);
  const current = await ctx.db.user.findUnique({ where: { id: ctx.actor.id }, omit: { passwordHash: false } });
  if (!current) throw notFound('this account no longer exists');
  const refuse = async (why: string, error: LedgerError) => {
    await auditRefusal(ctx.db, {
      chain: `user:${current.id}`,
      actor: ctx.actor,
      action: 'user.password_change',
      subjectType: 'user',
      subjectId: current.id,
      why,
      request: ctx.request,
    });
    return error;
  };
  // A stolen session must not guess the current password freely: the guesses count toward the same
  // per-account and per-address limit as sign-ins (Z4), and the slot is taken before the check.
  const ip = ctx.request?.ip ?? 'unknown';
  if (await beginAttempt(ctx.db, current.email, ip)) {
    const message = `too many wrong passwords for this account or from this address; try again in ${WINDOW_MINUTES} minutes`;
    throw await refuse('rate limited', new LedgerError('rate_limited', message, { field: 'currentPassword' }));
  }
  if (!current.passwordHash || !(await verifyPassword(current.passwordHash, input.currentPassword))) {
    const message = 'the current password is not right';
    throw await refuse(message, invalid('currentPassword', message));
  }
  await clearFailures(ctx.db, current.email);
  const passwordHash = await hashPassword(input.newPassword);
  const done = await ctx.db.$transaction(async (tx) => {
    // Only the hash read above may be replaced: a concurrent change (another tab) makes this one fail.
    const updated = await tx.user.updateMany({
      where: { id: current.id, passwordHash: current.passwordHash },
      data: { passwordHash, mustChangePassword: false, sessionVersion: { increment: 1 } },
    });
    if (updated.count === 0) return null;
    await appendAudit(tx, {
      chain: `user:${current.id}`,
      actor: ctx.actor,
      action: 'user.password_change',
      subjectType: 'user',
      subjectId: current.id,
      detail: { required: current.mustChangePassword },
      request: ctx.request,
    });
    return { id: current.id };
  });
  if (!done) {
    const message = 'the password changed meanwhile; sign in again';
    throw await refuse(message, invalid('currentPassword', message));
  }
  forgetCachedSessions(); // Z4: sessions this process remembers may have just ended
  return done;
}
