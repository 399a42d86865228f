// User administration (Z1: admin). Each command changes the row and writes its audit entry in one
// transaction. A person an admin adds must replace the password the admin chose (Z7). Disabling a
// user or changing a role bumps session_version, so their very next request is refused and they must
// sign in again (Z4).
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import type { DbOrTx, Db } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import { parseInput } from '../ledger/validate.ts';
import { assertAnotherAllWorkflowsAdmin } from './grant-commands.ts';
import { hashPassword } from './password.ts';
import { ROLES } from '../core/permissions.ts';
import { reasonField } from '@/lib/ledger/fields.ts';
import { forgetCachedSessions } from './session-cache.ts';

interface Ctx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

export const emailField = z.string().trim().toLowerCase().pipe(z.email('a valid email address'));
export const passwordField = z.string().min(12, 'at least 12 characters').max(200);

export const createUserInput = z.strictObject({
  email: emailField,
  name: z.string().trim().min(1, 'a name is required').max(200),
  role: z.enum(ROLES),
  password: passwordField,
  /** Why this person gets access (the console asks, as for a grant); kept on the audit entry. */
  reason: reasonField.optional(),
});

export async function createUser(ctx: Ctx, raw: unknown) {
  const input = parseInput(createUserInput, raw);
  const passwordHash = await hashPassword(input.password);
  return ctx.db.$transaction(async (tx) => {
    const existing = await tx.user.findUnique({ where: { email: input.email } });
    if (existing) throw conflict(`a user with email ${input.email} already exists`, { field: 'email' });
    // Two admins adding the same person at once both pass the check above; the unique index decides.
    // The admin chose this password and hands it over: the person replaces it before anything else (Z7).
    const user = await tx.user
      .create({
        data: { email: input.email, name: input.name, role: input.role, passwordHash, mustChangePassword: true },
      })
      .catch((error: unknown) => {
        if ((error as { code?: string }).code === 'P2002')
          throw conflict(`a user with email ${input.email} already exists`, { field: 'email' });
        throw error;
      });
    await appendAudit(tx, {
      chain: `user:${user.id}`,
      actor: ctx.actor,
      action: 'user.create',
      subjectType: 'user',
      subjectId: user.id,
      after: input.role,
      reason: input.reason ?? null,
      detail: { email: input.email, mustChangePassword: user.mustChangePassword },
      request: ctx.request,
    });
    return { id: user.id, email: user.email, role: user.role };
  });
}

export const updateUserInput = z.strictObject({
  userId: z.uuid(),
  role: z.enum(ROLES).optional(),
  disabled: z.boolean().optional(),
  reason: reasonField,
});

export async function updateUser(ctx: Ctx, raw: unknown) {
  const input = parseInput(updateUserInput, raw);
  if (input.role === undefined && input.disabled === undefined)
    throw invalid('role', 'change the role or the disabled flag');
  if (input.userId === ctx.actor.id && (input.disabled || (input.role && input.role !== 'admin'))) {
    throw invalid('userId', 'you cannot disable yourself or drop your own admin role; ask another admin');
  }
  const done = await ctx.db.$transaction(async (tx) => {
    const before = await tx.user.findUnique({ where: { id: input.userId } });
    if (!before) throw notFound(`user ${input.userId} does not exist`, { field: 'userId' });
    // Disabling an admin, or changing their own role away from admin (its all-workflows grant goes
    // with it), must leave another all-workflows admin (Z1).
    const losesAdmin =
      input.disabled === true || (before.role === 'admin' && input.role !== undefined && input.role !== 'admin');
    if (
      losesAdmin &&
      (await tx.roleGrant.count({ where: { userId: input.userId, role: 'admin', workflow: null } })) > 0
    )
      await assertAnotherAllWorkflowsAdmin(tx, input.userId);
    const user = await tx.user.update({
      where: { id: input.userId },
      data: { role: input.role, disabled: input.disabled, sessionVersion: { increment: 1 } },
    });
    await appendAudit(tx, {
      chain: `user:${user.id}`,
      actor: ctx.actor,
      action:
        input.disabled !== undefined && input.disabled !== before.disabled
          ? input.disabled
            ? 'user.disable'
            : 'user.enable'
          : 'user.role',
      subjectType: 'user',
      subjectId: user.id,
      before: `${before.role}${before.disabled ? ' (disabled)' : ''}`,
      after: `${user.role}${user.disabled ? ' (disabled)' : ''}`,
      reason: input.reason,
      request: ctx.request,
    });
    return { id: user.id, role: user.role, disabled: user.disabled };
  });
  forgetCachedSessions(); // Z4: sessions this process remembers may have just ended
  return done;
}

/** Used by the first-start bootstrap and `npm run user:create` (no signed-in actor). A password that
 *  is printed for someone else to pass on is marked to be changed at first sign-in (Z7). */
export async function insertUser(
  db: DbOrTx,
  data: { email: string; name: string; role: (typeof ROLES)[number]; password: string },
  actor: Actor,
  options: { mustChangePassword?: boolean } = {},
) {
  const input = parseInput(createUserInput, data);
  const passwordHash = await hashPassword(input.password);
  const user = await db.user.create({
    data: {
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash,
      mustChangePassword: options.mustChangePassword ?? false,
    },
  });
  await appendAudit(db, {
    chain: `user:${user.id}`,
    actor,
    action: 'user.create',
    subjectType: 'user',
    subjectId: user.id,
    after: input.role,
    detail: { email: input.email, mustChangePassword: user.mustChangePassword },
  });
  return user;
}
