// What GET /healthz, /readyz and /metrics report, kept out of the route handlers (which only turn
// these into HTTP). Readiness: the database answers and has every migration of this build; a load
// balancer stops sending requests to a process that is not ready, and Kubernetes-style probes read it.
import { apiDb } from '../api/db.ts';
import { sqlPool, sqlRows } from '../db/client.ts';
import { auditVerificationFigures } from '../audit/verification.ts';
import { componentLogger } from './log.ts';
import { exposition, watchAuditVerification, watchPool } from './metrics.ts';
import { migrationNames, pendingMigrationsWith } from './preflight.ts';

export interface Readiness {
  ready: boolean;
  checks: { database: string; migrations: string };
}

let shippedMigrations: string[] | undefined;
let logger: ReturnType<typeof componentLogger> | undefined;
const probeLog = () => (logger ??= componentLogger('web', true));

export async function readiness(): Promise<Readiness> {
  // Read once: the migrations folder ships with the build and does not change while it runs.
  shippedMigrations ??= migrationNames();
  if (!shippedMigrations.length) {
    return {
      ready: false,
      checks: { database: 'not checked', migrations: 'no prisma/migrations folder next to the build: ship it' },
    };
  }
  let pending: string[];
  try {
    const db = apiDb();
    pending = await pendingMigrationsWith((sql) => sqlRows<Record<string, unknown>>(db, sql, []), shippedMigrations);
  } catch (error) {
    // The probe answers anyone who can reach it: the driver's text (host names, ports, role names)
    // goes to the log only.
    probeLog().warn({ err: (error as Error).message }, 'readiness: database unreachable');
    return { ready: false, checks: { database: 'unreachable', migrations: 'not checked' } };
  }
  if (pending.length) {
    return {
      ready: false,
      checks: { database: 'ok', migrations: `pending: ${pending.join(', ')} (apply with npm run migrate)` },
    };
  }
  return { ready: true, checks: { database: 'ok', migrations: 'ok' } };
}

/** The metrics text; the app's pool is watched from the first scrape on (no database, no pool gauge). */
export async function scrape(): Promise<{ body: string; contentType: string }> {
  try {
    watchPool(sqlPool(apiDb()));
    watchAuditVerification(() => auditVerificationFigures(apiDb()));
  } catch {
    // DATABASE_URL unset (a misconfigured process): the rest of the metrics still tell that story.
  }
  return exposition();
}
