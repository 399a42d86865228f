// Notification routes: where chat webhooks go. Each route names a URL, the payload format (Standard
// Webhooks JSON, or a Slack-compatible message with links into the console), the events it wants, the
// workflows it covers and the environment variable that holds its signing secret. A route lives in
// the configuration (NOTIFY_WEBHOOK_ROUTES inline, or NOTIFY_WEBHOOK_ROUTES_FILE), read here, or in
// the database, kept by `effect-ledger apply` (./stored-routes.ts); the two share this schema, and in
// both the secret stays in the environment: the database never holds it.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { env, namedSecret } from '@/lib/env.ts';
import { webhookSecretProblem } from '@/lib/providers/webhook/secret.ts';

export const WEBHOOK_EVENT_TYPES = [
  'approval.waiting',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'unknowns.appeared',
  'replay.finished',
  'replay.failed',
  'audit.verification_failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const routeSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  /** standard: the event as JSON; slack: `text` and `blocks`, for a Slack-compatible incoming webhook. */
  format: z.enum(['standard', 'slack']).default('standard'),
  /** The events this route receives (default: all). */
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).optional(),
  /** Only events about these workflows (default: all; events about no workflow always pass). */
  workflows: z.array(z.string().min(1)).min(1).optional(),
  /** unknowns.appeared fires once this many keys became unknown since the route's previous alert. */
  unknownsThreshold: z.number().int().positive().default(1),
  /** The environment variable holding the route's Standard Webhooks secret (whsec_...). */
  secretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name'),
});
export type NotificationRoute = z.output<typeof routeSchema> & { name: string };

export const routeName = z.string().regex(/^[\w.-]{1,64}$/, 'a route name: letters, digits, _ . -');
const routesSchema = z.record(routeName, routeSchema);

let cached: { source: string; routes: NotificationRoute[] } | undefined;

/** The routes of the environment (none when nothing is configured). Throws naming the route at fault.
 *  ./stored-routes.ts adds the database's to them. */
export function environmentRoutes(): NotificationRoute[] {
  const e = env();
  const source =
    e.NOTIFY_WEBHOOK_ROUTES ?? (e.NOTIFY_WEBHOOK_ROUTES_FILE ? readFileSync(e.NOTIFY_WEBHOOK_ROUTES_FILE, 'utf8') : '');
  if (cached?.source === source) return cached.routes;
  const parsed = source ? routesSchema.safeParse(JSON.parse(source)) : { success: true as const, data: {} };
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`NOTIFY_WEBHOOK_ROUTES: ${issue.path.join('.')}: ${issue.message}`);
  }
  const routes = Object.entries(parsed.data).map(([name, r]) => ({ ...r, name }));
  cached = { source, routes };
  return routes;
}

/** The route's signing secret from the environment; throws with the reason when missing or malformed. */
export function routeSecret(route: NotificationRoute): string {
  const problem = routeSecretProblem(route);
  if (problem) throw new Error(problem);
  return namedSecret(route.secretEnv)!;
}

/** Why the route's secret cannot sign (unset or malformed), naming the route and the variable; null when it can. */
export function routeSecretProblem(route: Pick<NotificationRoute, 'name' | 'secretEnv'>): string | null {
  const secret = namedSecret(route.secretEnv);
  if (!secret) return `route ${route.name}: ${route.secretEnv} is not set`;
  const problem = webhookSecretProblem(secret);
  return problem ? `route ${route.name}: ${route.secretEnv}: ${problem}` : null;
}

/** Whether the route takes this event about these workflows. */
export function routeTakes(route: NotificationRoute, type: WebhookEventType, workflows: readonly string[]): boolean {
  if (route.events && !route.events.includes(type)) return false;
  if (!route.workflows || workflows.length === 0) return true;
  return workflows.some((w) => route.workflows!.includes(w));
}
