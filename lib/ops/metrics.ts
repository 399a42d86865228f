// Prometheus metrics (prom-client), served as text by GET /metrics. One registry per process, kept on
// globalThis: Next may load this module more than once (route bundles), and every copy must count
// into the same registry. Counters are per process; Prometheus sums them over the web processes.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ClaimResult = 'won' | 'lost' | 'refused';

function build() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ledger_' });
  const pools = new Set<{ waitingCount: number; totalCount: number; idleCount: number }>();
  const audit: { source?: AuditVerificationSource } = {};
  return {
    registry,
    pools,
    audit,
    auditVerifiedAge: new Gauge({
      name: 'ledger_audit_chain_verified_age_seconds',
      help: 'Seconds since the background audit verification last ran (A2; the leader worker runs it every 10 s). NaN until a first pass; growing: no worker leads.',
      registers: [registry],
      async collect() {
        const v = await audit.source?.().catch(() => null);
        this.set(v?.ageSeconds ?? NaN);
      },
    }),
    auditChainOk: new Gauge({
      name: 'ledger_audit_chain_ok',
      help: 'Whether the last audit verification found the trail intact (1) or broken (0); NaN until a first pass. Alert on 0.',
      registers: [registry],
      async collect() {
        const v = await audit.source?.().catch(() => null);
        this.set(v?.ok == null ? NaN : v.ok ? 1 : 0);
      },
    }),
    auditTreeRefusals: new Counter({
      name: 'ledger_audit_tree_sign_refusals_total',
      help: 'Signing rounds in which the audit tree signer refused the head: it does not extend the head it signed last (the trail or the tree was rewritten). Alert on any increase.',
      registers: [registry],
    }),
    auditTreeSignedSize: new Gauge({
      name: 'ledger_audit_tree_signed_size',
      help: 'Leaves of the audit tree in the head this process signed last.',
      registers: [registry],
    }),
    claims: new Counter({
      name: 'ledger_claims_total',
      help: 'Effect claims answered by the agent API, by result (won: this caller may call the provider; lost: another holds or finished it; refused: an error answer).',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    transitions: new Counter({
      name: 'ledger_transitions_total',
      help: 'Effect outcomes reported through the agent API (POST /effects/outcome), by the state reached.',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    errors: new Counter({
      name: 'ledger_errors_total',
      help: 'Error answers (status 500 and above) of the agent API, by problem code.',
      labelNames: ['code'] as const,
      registers: [registry],
    }),
    routeErrors: new Counter({
      name: 'ledger_api_errors_total',
      help: 'Error answers (status 400 and above) of the agent API, by operation (route) and status.',
      labelNames: ['operation', 'status'] as const,
      registers: [registry],
    }),
    requestSeconds: new Histogram({
      name: 'ledger_http_request_duration_seconds',
      help: 'Agent API request latency, by operation and status.',
      labelNames: ['operation', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    poolWaiting: new Gauge({
      name: 'ledger_db_pool_waiting',
      help: 'Queries waiting for a free connection of this process’s database pools (sustained > 0: the pool or the database is the bottleneck).',
      registers: [registry],
      collect() {
        this.set([...pools].reduce((n, p) => n + p.waitingCount, 0));
      },
    }),
    poolConnections: new Gauge({
      name: 'ledger_db_pool_connections',
      help: 'Connections of this process’s database pools, by state.',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const all = [...pools];
        this.set(
          { state: 'total' },
          all.reduce((n, p) => n + p.totalCount, 0),
        );
        this.set(
          { state: 'idle' },
          all.reduce((n, p) => n + p.idleCount, 0),
        );
      },
    }),
  };
}

type Metrics = ReturnType<typeof build>;
const holder = globalThis as unknown as { __ledgerMetrics?: Metrics };

export function metrics(): Metrics {
  holder.__ledgerMetrics ??= build();
  return holder.__ledgerMetrics;
}

/** A node-postgres pool whose waiting and connection counts are reported (it is read at each scrape). */
export function watchPool(pool: { waitingCount: number; totalCount: number; idleCount: number } | undefined): void {
  if (pool) metrics().pools.add(pool);
}

/** What one agent API answer says about claims, transitions, errors and latency. An answer replayed
 *  for a repeated Idempotency-Key counts for latency only: its claim or outcome was counted once. */
export function observeApiAnswer(
  operation: string,
  status: number,
  body: unknown,
  seconds: number,
  replayed = false,
): void {
  const m = metrics();
  m.requestSeconds.observe({ operation, status: String(status) }, seconds);
  if (replayed) return;
  if (status >= 400) m.routeErrors.inc({ operation, status: String(status) });
  if (status >= 500) m.errors.inc({ code: String((body as { code?: unknown } | null)?.code ?? status) });
  if (operation === 'effect.claim')
    m.claims.inc({ result: status === 201 ? 'won' : status === 200 ? 'lost' : 'refused' });
  const state = (body as { state?: unknown } | null)?.state;
  if (operation === 'effect.report' && status === 200 && typeof state === 'string') m.transitions.inc({ state });
}

/** What the audit gauges report at a scrape: the stored verification's age and result (null: none yet). */
export type AuditVerificationSource = () => Promise<{ ageSeconds: number | null; ok: boolean | null }>;

/** Reports the background audit verification (read from the database at each scrape). */
export function watchAuditVerification(source: AuditVerificationSource): void {
  metrics().audit.source = source;
}

/** The registry in Prometheus text format, with its content type. */
export async function exposition(): Promise<{ body: string; contentType: string }> {
  const { registry } = metrics();
  return { body: await registry.metrics(), contentType: registry.contentType };
}
