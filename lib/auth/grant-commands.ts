// Granting and taking away roles per workflow (Z1: admins only). Each command changes the grants and
// writes its audit entry in one transaction; the person's next request reads the new grants (Z4), in
// this process at once: its memory of sessions is cleared after the commit.
// At least one enabled person keeps an all-workflows admin grant, or nobody could manage users again.
import { z } from 'zod';
import { appendAudit } from '../audit/append.ts';
import type { Db, DbOrTx } from '../db/client.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import { reasonField } from '../ledger/fields.ts';
import { parseInput } from '../ledger/validate.ts';
import { workflowsWithoutRuns } from './admin-commands.ts';
import { grantsLabel, type Grant } from './grants.ts';
import { ROLES } from '../core/permissions.ts';
import { forgetCachedSessions } from './session-cache.ts';

interface Ctx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

/** A workflow name, or empty / "*" / absent for every workflow. */
const workflowField = z
  .union([z.string(), z.null()])
  .optional()
  .transform((v) => (v === undefined || v === null || v.trim() === '' || v.trim() === '*' ? null : v.trim()))
  .pipe(z.string().max(128, 'at most 128 characters').nullable());

export const addGrantInput = z.strictObject({
  userId: z.uuid(),
  role: z.enum(ROLES),
  workflow: workflowField,
  /** The admin confirms that a workflow without runs is meant: one that has not run yet. */
  newWorkflow: z.boolean().default(false),
  reason: reasonField,
});

export const removeGrantInput = z.strictObject({ grantId: z.uuid(), reason: reasonField });

async function grantsOf(tx: DbOrTx, userId: string): Promise<Grant[]> {
  return tx.roleGrant.findMany({
    where: { userId },
    select: { role: true, workflow: true },
    orderBy: [{ workflow: 'asc' }, { role: 'asc' }],
  });
}

/** How many enabled people other than `userId` hold an all-workflows admin grant. Locks those grants
 *  first, so two admins taking each other's grant at once are serialized and the second sees the
 *  first's removal. */
async function otherAllWorkflowsAdmins(tx: DbOrTx, userId: string): Promise<number> {
  await tx.$queryRaw`SELECT id FROM role_grant WHERE role = 'admin' AND workflow IS NULL FOR UPDATE`;
  return tx.roleGrant.count({
    where: { role: 'admin', workflow: null, userId: { not: userId }, user: { disabled: false } },
  });
}

/** Refuses when `userId` holds the last all-workflows admin grant of an enabled person and is about to
 *  lose it. */
export async function assertAnotherAllWorkflowsAdmin(tx: DbOrTx, userId: string): Promise<void> {
  if ((await otherAllWorkflowsAdmins(tx, userId)) === 0) {
    throw conflict('this is the last all-workflows admin: grant admin on all workflows to someone else first', {
      field: 'grantId',
    });
  }
}

/** Whether `userId` holds an all-workflows admin grant and no other enabled person does (locked as
 *  above), for changes that must then keep it instead of refusing (a single sign-on's role sync). */
export async function isLastAllWorkflowsAdmin(tx: DbOrTx, userId: string): Promise<boolean> {
  if ((await otherAllWorkflowsAdmins(tx, userId)) > 0) return false;
  return (await tx.roleGrant.count({ where: { userId, role: 'admin', workflow: null } })) > 0;
}

export async function addGrant(ctx: Ctx, raw: unknown) {
  const input = parseInput(addGrantInput, raw);
  if (input.workflow !== null && !input.newWorkflow) {
    const unknown = await workflowsWithoutRuns(ctx.db, [input.workflow]);
    if (unknown.length > 0) {
      throw invalid(
        'workflow',
        `no workflow "${input.workflow}" has ever run: check the spelling, or tick "New workflow" to grant a role on one that has not run yet`,
      );
    }
  }
  const done = await ctx.db.$transaction(async (tx) => {
    // One grant change per person at a time (the unique index cannot see two all-workflows grants).
    const locked = await tx.$queryRaw<
      { id: string }[]
    >`SELECT id FROM app_user WHERE id = ${input.userId}::uuid FOR UPDATE`;
    if (locked.length === 0) throw notFound(`user ${input.userId} does not exist`, { field: 'userId' });
    const before = await grantsOf(tx, input.userId);
    if (before.some((g) => g.role === input.role && g.workflow === input.workflow)) {
      throw conflict(`the user already holds ${input.role} on ${input.workflow ?? 'all workflows'}`, { field: 'role' });
    }
    const grant = await tx.roleGrant.create({
      data: { userId: input.userId, role: input.role, workflow: input.workflow },
    });
    await appendAudit(tx, {
      chain: `user:${input.userId}`,
      actor: ctx.actor,
      action: 'user.grant',
      subjectType: 'user',
      subjectId: input.userId,
      before: grantsLabel(before),
      after: grantsLabel(await grantsOf(tx, input.userId)),
      reason: input.reason,
      detail: { grantId: grant.id, role: grant.role, workflow: grant.workflow },
      request: ctx.request,
    });
    return { id: grant.id, userId: grant.userId, role: grant.role, workflow: grant.workflow };
  });
  forgetCachedSessions(); // Z4: sessions this process remembers hold the grants as they were
  return done;
}

export async function removeGrant(ctx: Ctx, raw: unknown) {
  const input = parseInput(removeGrantInput, raw);
  const done = await ctx.db.$transaction(async (tx) => {
    const grant = await tx.roleGrant.findUnique({ where: { id: input.grantId } });
    if (!grant) throw notFound(`grant ${input.grantId} does not exist`, { field: 'grantId' });
    if (grant.role === 'admin' && grant.workflow === null) {
      if (grant.userId === ctx.actor.id) {
        throw invalid('grantId', 'you cannot take away your own all-workflows admin grant; ask another admin');
      }
      await assertAnotherAllWorkflowsAdmin(tx, grant.userId);
    }
    // Admin grants first, then the person: the same order as updateUser, so the two never deadlock.
    await tx.$queryRaw`SELECT id FROM app_user WHERE id = ${grant.userId}::uuid FOR UPDATE`;
    const before = await grantsOf(tx, grant.userId);
    // A second removal of the same grant, which found it before the first one committed, finds it
    // gone here: not found, and its transaction writes nothing.
    const deleted = await tx.roleGrant.deleteMany({ where: { id: grant.id } });
    if (deleted.count === 0) throw notFound(`grant ${input.grantId} does not exist`, { field: 'grantId' });
    await appendAudit(tx, {
      chain: `user:${grant.userId}`,
      actor: ctx.actor,
      action: 'user.ungrant',
      subjectType: 'user',
      subjectId: grant.userId,
      before: grantsLabel(before),
      after: grantsLabel(await grantsOf(tx, grant.userId)),
      reason: input.reason,
      detail: { grantId: grant.id, role: grant.role, workflow: grant.workflow },
      request: ctx.request,
    });
    return { id: grant.id, userId: grant.userId, role: grant.role, workflow: grant.workflow };
  });
  forgetCachedSessions(); // Z4: as above
  return done;
}
