// The chat webhook routes of a setup document (docs/MANAGE.md) against the stored ones: what to
// create, update or remove, and what to warn about. A route named like one of the environment's is
// refused (one home per route); a route whose secret variable is not set, or is malformed, in this
// server's environment is applied with a warning, since its posts fail until the variable is there.
import { invalid } from '../ledger/errors.ts';
import type { DbOrTx } from '../db/client.ts';
import { environmentRoutes, routeSecretProblem, type NotificationRoute } from '../notifications/webhooks/routes.ts';
import { storedRoutes } from '../notifications/webhooks/stored-routes.ts';
import type { ApplyInput, Change } from './apply-document.ts';

const ROUTE_FIELDS = ['url', 'format', 'events', 'workflows', 'unknownsThreshold', 'secretEnv'] as const;

/** A field's value for comparing: the lists as sets, an absent list as the empty one ("all"). */
function comparable(route: NotificationRoute, field: (typeof ROUTE_FIELDS)[number]): string {
  const v = route[field];
  if (field === 'events' || field === 'workflows')
    return JSON.stringify([...((v as string[] | undefined) ?? [])].sort());
  return JSON.stringify(v);
}

export async function planRouteChanges(
  db: DbOrTx,
  routes: ApplyInput['document']['notificationRoutes'],
): Promise<{ changes: Change[]; warnings: string[] }> {
  if (!routes) return { changes: [], warnings: [] };
  const fromEnv = new Set(environmentRoutes().map((r) => r.name));
  routes.forEach((r, i) => {
    if (fromEnv.has(r.name))
      throw invalid(
        `notificationRoutes.${i}.name`,
        `route ${r.name} is configured in the environment (NOTIFY_WEBHOOK_ROUTES): a route has one home, so take it out of the file or out of the environment`,
      );
  });
  const stored = await storedRoutes(db);
  const changes: Change[] = [];
  for (const route of routes) {
    const now = stored.find((s) => s.name === route.name);
    if (!now) changes.push({ kind: 'notification_route', action: 'create', name: route.name });
    else {
      const fields = ROUTE_FIELDS.filter((f) => comparable(now, f) !== comparable(route, f));
      if (fields.length) changes.push({ kind: 'notification_route', action: 'update', name: route.name, fields });
    }
  }
  for (const s of stored)
    if (!routes.some((r) => r.name === s.name))
      changes.push({ kind: 'notification_route', action: 'remove', name: s.name });
  const warnings = routes
    .map((r) => routeSecretProblem(r))
    .filter((p): p is string => p !== null)
    .map((p) => `${p} (in the server's environment): the route's posts fail until it is fixed`);
  return { changes, warnings };
}
