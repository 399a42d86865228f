// The one place that reads process.env (conventions: validate configuration once).
import { z } from 'zod';
import { parseRoleMap } from './auth/oidc-roles.ts';
import { webhookSecretProblem } from './providers/webhook/secret.ts';

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** The application role's connection (A3). Absent: the embedded server started by scripts/start. */
  DATABASE_URL: z.string().min(1).optional(),
  /** The owner role that runs migrations. Defaults to DATABASE_URL when only one URL is given. */
  MIGRATION_DATABASE_URL: z.string().min(1).optional(),
  /** Named prepared statements on the hot paths; false behind a transaction-mode pooler that does not
   *  track them (also implied by `pgbouncer=true` in the URL). */
  DATABASE_PREPARED_STATEMENTS: z.stringbool().default(true),
  /** How long a query waits for a free connection of the pool before it fails (503 to an agent). */
  DATABASE_POOL_TIMEOUT_MS: z.coerce.number().int().positive().default(3_000),
  /** The web process's deadline for one statement: a database that stops answering (paused,
   *  partitioned) is answered 503 after this, and the connection is closed. 0: no deadline. With the
   *  pool timeout it bounds how long a request can wait on the database (under 10 s by default). */
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(0).default(6_000),
  /** Where the embedded PostgreSQL keeps its data and generated credentials. */
  LEDGER_DATA_DIR: z.string().default('.data'),
  PORT: z.coerce.number().int().positive().default(3000),
  /** The demo sandbox provider started by `npm start`. */
  SANDBOX_PORT: z.coerce.number().int().positive().default(4010),
  /** The embedded PostgreSQL of `npm start` (demo only; ignored when DATABASE_URL is set). */
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().positive().default(54329),
  /** Address the console/API listens on (`npm run start:prod`). */
  LISTEN_HOST: z.string().default('0.0.0.0'),
  /** Structured JSON log level (pino): fatal, error, warn, info, debug, trace or silent. */
  /** Unset: info, or warn under NODE_ENV=test (test runs stay readable). */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  /** Proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For is believed. */
  TRUSTED_PROXIES: z.string().default(''),
  /** A worker's own /healthz, /readyz (heartbeat fresh) and /metrics port; unset: none. */
  WORKER_HTTP_PORT: z.coerce.number().int().positive().optional(),
  /** When set, GET /metrics requires it as a bearer token. */
  METRICS_TOKEN: z.string().min(1).optional(),
  /** OpenTelemetry: traces are exported over OTLP/HTTP to this endpoint when set (lib/ops/tracing.ts). */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  /** The service name on exported spans; unset: effect-ledger-web or effect-ledger-worker. */
  OTEL_SERVICE_NAME: z.string().optional(),
  /** How long SIGTERM/SIGINT waits for in-flight requests and replay chunks before killing what is left. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(25),
  NEXTAUTH_URL: z.string().optional(),
  NEXTAUTH_SECRET: z.string().optional(),
  OIDC_ISSUER: z.string().optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  /** Scopes asked of the identity provider; add the one that releases the groups claim if it needs one. */
  OIDC_SCOPE: z.string().default('openid email profile'),
  /** The claim (ID token or userinfo) holding the person's groups: a list of strings, or one string. */
  OIDC_GROUPS_CLAIM: z.string().min(1).default('groups'),
  /** Groups to roles, first match first: "group=role,group=role", or JSON [{"group": ..., "role": ...}]
   *  for group names with commas (lib/auth/oidc-roles.ts). Malformed: refused at start, naming the entry.
   *  A person with no account whose groups map is created at first sign-in. */
  OIDC_ROLE_MAP: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseRoleMap(text);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Re-applies the mapped role at every single sign-on (an existing person with no mapped group keeps theirs). */
  OIDC_SYNC_ROLES: z.stringbool().default(true),
  /** "off" removes the email + password form and refuses the credentials endpoint (single sign-on only). */
  AUTH_CREDENTIALS: z.enum(['on', 'off']).default('on'),
  CHROMIUM_PATH: z.string().optional(),
  LOG_SQL: z.stringbool().default(false),
  /** Delivery providers' settings as JSON (lib/providers/registry.ts), or a file holding it. No secrets. */
  LEDGER_PROVIDERS: z.string().optional(),
  LEDGER_PROVIDERS_FILE: z.string().optional(),
  /** Provider secrets: only ever from the environment. */
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  /** "whsec_" + base64 of 24 to 64 bytes (Standard Webhooks); any other shape is refused at start. */
  WEBHOOK_SIGNING_SECRET: z
    .string()
    .optional()
    .superRefine((v, ctx) => {
      const problem = v === undefined ? null : webhookSecretProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /** Live console pages: how often each web process polls for changes while a page listens, and
   *  how many live pages (server-sent event streams) one process serves. */
  LIVE_POLL_MS: z.coerce.number().int().min(100).default(1000),
  LIVE_MAX_CONNECTIONS: z.coerce.number().int().positive().default(500),
  /** Replay worker (scripts/worker.ts): parallel chunk handlers per process, reconciler period. */
  REPLAY_CONCURRENCY: z.coerce.number().int().positive().default(4),
  /** Prints where a replay worker's time goes, every 5 s (for profiling). */
  REPLAY_TRACE: z.stringbool().default(false),
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().positive().default(30),
  /** Retention (T1, lib/retention): days after a run's event closed, or its last activity, before its
   *  idempotency records, raw provider responses and finished replay items are pruned. */
  RETENTION_WINDOW_DAYS: z.coerce.number().int().min(1).default(30),
  /** Runs pruned per transaction (one audit entry each). */
  RETENTION_BATCH_RUNS: z.coerce.number().int().positive().default(200),
  /** How often the worker leader prunes; 0 turns the scheduled prune off (`npm run prune` still works). */
  RETENTION_INTERVAL_MINUTES: z.coerce.number().min(0).default(60),
  /** Signed audit checkpoints (docs/AUDIT.md): an Ed25519 private key as PKCS8 PEM, or the path of a
   *  file holding one. Never stored in the database. Unset: no checkpoints are signed. */
  AUDIT_SIGNING_KEY: z.string().min(1).optional(),
  /** The connection the signing round and the tree signer store signatures with: a login that is a
   *  member of ledger_audit_signer (the application role may not insert checkpoints or tree heads).
   *  Unset: MIGRATION_DATABASE_URL (the owner). */
  AUDIT_SIGNER_DATABASE_URL: z.string().min(1).optional(),
  /** Public keys (PEM files, comma-separated paths) of earlier signing keys: their stored checkpoints
   *  still bind the signing round after a rotation. A stored checkpoint no trusted key verifies is
   *  ignored and reported. */
  AUDIT_PREVIOUS_PUBLIC_KEYS: z.string().min(1).optional(),
  /** How often the worker leader signs the chain heads that moved (and the audit tree's head). */
  AUDIT_CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().positive().default(300),
  /** The audit tree's name: the origin line of its signed heads and the signer's key name (docs/AUDIT.md).
   *  One per deployment, kept across key rotations: witnesses follow a log by this name. */
  AUDIT_TREE_ORIGIN: z
    .string()
    .regex(/^[^\s+]+$/, 'no spaces and no "+"')
    .default('effect-ledger/audit'),
  /** The file holding the tree head the signer signed last (outside the database). Default: the key's
   *  path plus `.tree-state` when AUDIT_SIGNING_KEY is a path; unset with a PEM in the setting: the
   *  tree's heads are not signed. */
  AUDIT_TREE_STATE: z.string().min(1).optional(),
  /** How often the worker leader integrates new audit entries into the audit tree. */
  AUDIT_TREE_SEQUENCE_SECONDS: z.coerce.number().positive().default(5),
  /** Verifier keys (vkeys, separated by commas or whitespace) of the witnesses whose cosignatures the
   *  API accepts and serves with the head (POST /api/v1/audit/tree/cosignature). Unset: none. */
  AUDIT_WITNESS_KEYS: z.string().min(1).optional(),
  /** How long a four-eyes replay request stays approvable (Z3). */
  REPLAY_APPROVAL_TTL_MINUTES: z.coerce.number().positive().default(240),
  /** Notifications by email (lib/notifications): the name of an smtp provider in LEDGER_PROVIDERS whose
   *  server and From address they use. Unset: notifications stay in the console inbox. */
  NOTIFY_EMAIL_PROVIDER: z.string().min(1).optional(),
  /** How often each worker sends the pending notification emails, and how often it tries one before giving up. */
  NOTIFY_EMAIL_INTERVAL_SECONDS: z.coerce.number().positive().default(10),
  NOTIFY_EMAIL_MAX_ATTEMPTS: z.coerce.number().int().positive().default(8),
  /** Chat webhooks (lib/notifications/webhooks): the notification routes as JSON, inline or in a file
   *  (docs/NOTIFICATIONS.md). Each route's signing secret comes from the environment variable it names. */
  NOTIFY_WEBHOOK_ROUTES: z.string().min(1).optional(),
  NOTIFY_WEBHOOK_ROUTES_FILE: z.string().min(1).optional(),
  NOTIFY_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().positive().default(10),
  /** Retention of notifications (lib/retention/prune-notifications.ts): days after which a read
   *  notification is pruned, and after which any notification is, read or not (at least as long). */
  NOTIFY_RETENTION_READ_DAYS: z.coerce.number().int().min(1).default(30),
  NOTIFY_RETENTION_DAYS: z.coerce.number().int().min(1).default(180),
});

export type Env = z.infer<typeof schema>;

let cached: Env | undefined;

/** Parsed environment; throws a readable error naming the bad variable. */
export function env(): Env {
  if (!cached) {
    const parsed = schema.safeParse(process.env);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new Error(`Invalid environment: ${issues}`);
    }
    cached = parsed.data;
  }
  return cached;
}

/** For scripts that set variables (e.g. the embedded server's URL) before the app reads them. */
export function resetEnvCache(): void {
  cached = undefined;
}

/** Which of these variables are unset or blank (production refuses to start without them). */
export function unsetVariables<N extends string>(names: readonly N[]): N[] {
  return names.filter((name) => !process.env[name]?.trim());
}

/** A secret whose variable's name comes from configuration (a notification route's `secretEnv`): the
 *  schema above cannot list it, so it is read here, where every read of the environment lives. */
export function namedSecret(name: string): string | undefined {
  return process.env[name]?.trim() || undefined;
}
