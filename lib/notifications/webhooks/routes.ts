// Notification routes: where chat webhooks go. Each route names a URL, the payload format (Standard
// Webhooks JSON, or a Slack-compatible message with links into the console), the events it wants, the
// workflows it covers and the environment variable that holds its signing secret. Routes are
// configuration (NOTIFY_WEBHOOK_ROUTES inline, or NOTIFY_WEBHOOK_ROUTES_FILE), like providers: an ops
// team keeps them in its deployment, and the secrets never reach the database.
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

const routeSchema = z.strictObject({
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

const routesSchema = z.record(z.string().regex(/^[\w.-]{1,64}$/, 'a route name: letters, digits, _ . -'), routeSchema);

let cached: { source: string; routes: NotificationRoute[] } | undefined;

/** The configured routes (none when nothing is configured). Throws naming the route at fault. */
export function notificationRoutes(): NotificationRoute[] {
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
  const secret = namedSecret(route.secretEnv);
  if (!secret) throw new Error(`route ${route.name}: ${route.secretEnv} is not set`);
  const problem = webhookSecretProblem(secret);
  if (problem) throw new Error(`route ${route.name}: ${route.secretEnv}: ${problem}`);
  return secret;
}

/** Whether the route takes this event about these workflows. */
export function routeTakes(route: NotificationRoute, type: WebhookEventType, workflows: readonly string[]): boolean {
  if (route.events && !route.events.includes(type)) return false;
  if (!route.workflows || workflows.length === 0) return true;
  return workflows.some((w) => route.workflows!.includes(w));
}
