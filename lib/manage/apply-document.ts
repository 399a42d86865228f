// The declarative setup document `effect-ledger apply -f ledger.yaml` sends (docs/MANAGE.md): the
// tools, the runtime keys, per workflow exactly who holds which role there, and the chat webhook
// routes kept in the database. Parsed here with the same field rules as the console's forms and the
// environment's routes; a bad entry is refused naming its path.
import { z } from 'zod';
import { saveToolInput } from '../auth/admin-commands.ts';
import { ROLES } from '../auth/permissions.ts';
import { emailField } from '../auth/users.ts';
import { routeName, routeSchema } from '../notifications/webhooks/routes.ts';

const name = z.string().trim().min(1).max(200);

export const applyDocument = z.strictObject({
  /** Tool definitions, created or brought to exactly these fields. */
  tools: z.array(saveToolInput).max(500).default([]),
  /** Runtime keys by name: created when no active key has the name; one whose workflows differ is
   *  replaced (the old one revoked). Keys the file does not name are left alone. */
  runtimeKeys: z
    .array(z.strictObject({ name, workflows: z.array(z.string().trim().min(1).max(128)).min(1).max(100) }))
    .max(500)
    .default([]),
  /** Per workflow ("*": every workflow), the complete list of grants on it: a grant there that the
   *  file does not list is removed. Workflows the file does not name are left alone. */
  workflows: z
    .record(
      z.string().trim().min(1).max(128),
      z.strictObject({
        grants: z.array(z.strictObject({ user: emailField, role: z.enum(ROLES) })).max(1000),
      }),
    )
    .default({}),
  /** When present, the complete list of the stored chat webhook routes (the fields of
   *  NOTIFY_WEBHOOK_ROUTES' routes, with their name): a stored route the list does not name is
   *  removed. Absent: stored routes are left alone. The secrets stay in the environment. */
  notificationRoutes: z
    .array(routeSchema.extend({ name: routeName }))
    .max(200)
    .refine((rs) => new Set(rs.map((r) => r.name)).size === rs.length, 'each route name once')
    .optional(),
});

export const applyInput = z.strictObject({
  document: applyDocument,
  /** The SHA-256 of the file as the caller read it: every change's audit entry carries it. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'the hex SHA-256 of the setup file'),
  /** Show the changes, write nothing. */
  dryRun: z.boolean().default(false),
});

export type ApplyInput = z.output<typeof applyInput>;

export type Change =
  | { kind: 'tool'; action: 'create' | 'update'; name: string; fields?: string[] }
  | { kind: 'runtime_key'; action: 'create' | 'replace'; name: string; workflows: string[] }
  | { kind: 'grant'; action: 'add' | 'remove'; workflow: string; user: string; role: string }
  | { kind: 'notification_route'; action: 'create' | 'update' | 'remove'; name: string; fields?: string[] };
