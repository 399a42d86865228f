// Notification routes kept in the database by `effect-ledger apply` (docs/MANAGE.md), beside the
// environment's (./routes.ts). Same fields and rules as the environment's; the signing secret stays
// in the environment variable the route names. A name has one home: apply refuses a stored route
// named like an environment route, and should the environment gain that name later, the
// environment's route is the one used.
import { appendAudit } from '@/lib/audit/append.ts';
import type { Db, DbOrTx } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/ledger/actor.ts';
import { environmentRoutes, routeSecretProblem, type NotificationRoute, type WebhookEventType } from './routes.ts';

interface Ctx {
  db: Db;
  actor: Actor;
  request?: RequestMeta;
}

/** A stored row as a route: an empty list of events or workflows means "all", as an absent one does. */
function fromRow(row: {
  name: string;
  url: string;
  format: string;
  events: string[];
  workflows: string[];
  unknownsThreshold: number;
  secretEnv: string;
}): NotificationRoute {
  return {
    name: row.name,
    url: row.url,
    format: row.format === 'slack' ? 'slack' : 'standard',
    events: row.events.length ? (row.events as WebhookEventType[]) : undefined,
    workflows: row.workflows.length ? row.workflows : undefined,
    unknownsThreshold: row.unknownsThreshold,
    secretEnv: row.secretEnv,
  };
}

/** The routes `effect-ledger apply` stored, by name. */
export async function storedRoutes(db: DbOrTx): Promise<NotificationRoute[]> {
  const rows = await db.notificationRoute.findMany({ orderBy: { name: 'asc' } });
  return rows.map(fromRow);
}

/** Every route: the environment's, then the stored ones whose names the environment does not use. */
export async function notificationRoutes(db: DbOrTx): Promise<NotificationRoute[]> {
  const fromEnv = environmentRoutes();
  const taken = new Set(fromEnv.map((r) => r.name));
  return [...fromEnv, ...(await storedRoutes(db)).filter((r) => !taken.has(r.name))];
}

/** The route's row: absent lists stored empty. */
function toRow(route: NotificationRoute) {
  return {
    url: route.url,
    format: route.format,
    events: route.events ?? [],
    workflows: route.workflows ?? [],
    unknownsThreshold: route.unknownsThreshold,
    secretEnv: route.secretEnv,
  };
}

/** Creates the route or brings it to exactly these fields, audited in the caller's transaction.
 *  The caller authorizes (admin: the management API's apply decision) and validates (routeSchema). */
export async function saveNotificationRoute(ctx: Ctx, route: NotificationRoute, reason?: string): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    const before = await tx.notificationRoute.findUnique({ where: { name: route.name } });
    const row = toRow(route);
    await tx.notificationRoute.upsert({
      where: { name: route.name },
      create: { name: route.name, ...row },
      update: row,
    });
    await appendAudit(tx, {
      chain: `notification_route:${route.name}`,
      actor: ctx.actor,
      action: before ? 'notification_route.update' : 'notification_route.create',
      subjectType: 'notification_route',
      subjectId: route.name,
      reason: reason ?? null,
      detail: { before: before ? toRow(fromRow(before)) : null, after: row },
      request: ctx.request,
    });
  });
}

/** Removes a stored route, audited in the caller's transaction. Its queued posts are given up at the
 *  next delivery pass, as those of a route taken out of the environment are. */
export async function removeNotificationRoute(ctx: Ctx, name: string, reason: string): Promise<void> {
  await ctx.db.$transaction(async (tx) => {
    const before = await tx.notificationRoute.delete({ where: { name } });
    await appendAudit(tx, {
      chain: `notification_route:${name}`,
      actor: ctx.actor,
      action: 'notification_route.remove',
      subjectType: 'notification_route',
      subjectId: name,
      reason,
      detail: { before: toRow(fromRow(before)) },
      request: ctx.request,
    });
  });
}

/** Every route with where it lives and whether this server can sign for it, for the management API's
 *  read. A stored route the environment has since taken the name of is listed as not in use. */
export async function describeRoutes(db: DbOrTx) {
  const fromEnv = environmentRoutes();
  const taken = new Set(fromEnv.map((r) => r.name));
  const describe = (r: NotificationRoute, source: 'environment' | 'stored') => ({
    ...r,
    source,
    inUse: source === 'environment' || !taken.has(r.name),
    secretProblem: routeSecretProblem(r),
  });
  return [
    ...fromEnv.map((r) => describe(r, 'environment')),
    ...(await storedRoutes(db)).map((r) => describe(r, 'stored')),
  ];
}
