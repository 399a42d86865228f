// The audit export as evidence (A2, A5): every entry with everything its hash covers (chain, seq,
// prev_hash, hash, canonical form version, the actor's kind, id, label and role, action, subject,
// states before and after, reason, outcome, detail, source address and user agent, request id, and
// the time to the microsecond as the hash saw it), oldest first, a thousand rows at a time. JSON Lines
// ends with a summary line stating the seq range exported per chain, so an export of part of a chain
// says which part it is; `npm run audit:verify` checks a file with no database (lib/sdk/audit/verify-export.ts).
import type { ExportedEntry } from '../sdk/audit/canonical.ts';
import type { ExportSummary } from '../sdk/audit/verify-export.ts';
import { Prisma, sqlPool, type Db } from '../db/client.ts';
import { whereOf, type AuditFilter } from './audit.ts';
import type { WorkflowScope } from '@/lib/auth/grants.ts';

const BATCH = 1000;

/**
 * Every matching entry the viewer may see (Z1), oldest first (by id), in constant memory for the rows.
 *
 * Every batch is read in one REPEATABLE READ READ ONLY transaction, so the whole export is one
 * snapshot. Ids are drawn when an entry is inserted, not when it commits: batches read in separate
 * snapshots could miss an entry that committed late below the id already passed, while a later seq of
 * its chain (appended after that commit) lands in a later batch, and a genuine export would then show
 * a sequence gap. In one snapshot an entry that commits during the export is absent together with
 * everything appended after it to its chain.
 *
 * The transaction holds one connection of the root client's pool (node-postgres directly: Prisma's
 * interactive transactions end after a fixed time, and a download may take longer) until the last
 * row is read or the consumer stops early (return() releases it).
 */
export async function* auditExportStream(
  db: Db,
  f: AuditFilter,
  scope: WorkflowScope,
  options: { batch?: number } = {},
): AsyncGenerator<ExportedEntry> {
  const batch = options.batch ?? BATCH;
  const pool = sqlPool(db);
  if (!pool) throw new Error('auditExportStream needs the root database client');
  const client = await pool.connect();
  // A connection lost between two batches is an error event on the checked-out client; unheard, it
  // would end the process. The next query fails instead, and the client is discarded below.
  let lost: Error | undefined;
  const onError = (error: Error) => (lost = error);
  client.on('error', onError);
  let committed = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const where = whereOf(f, scope);
    let after = '0';
    for (;;) {
      const q = Prisma.sql`
        SELECT a.id::text AS id, a.canon_version::int AS version, a.chain, a.seq, a.prev_hash, a.hash,
               to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
               a.actor_kind::text AS actor_kind, a.actor_id, a.actor_label, a.actor_role, a.action,
               a.subject_type, a.subject_id, a.run_id::text AS run_id, a.before_state, a.after_state,
               a.reason, a.outcome, a.detail, a.ip, a.user_agent, a.request_id
        FROM audit_entry a WHERE ${where} AND a.id > ${after}::bigint
        ORDER BY a.id LIMIT ${batch}::int`;
      const { rows } = await client.query<ExportedEntry>(q.text, q.values);
      yield* rows;
      if (rows.length < batch) break;
      after = rows.at(-1)!.id;
    }
    await client.query('COMMIT');
    committed = true;
  } finally {
    if (!committed) await client.query('ROLLBACK').catch((error: Error) => (lost ??= error));
    client.off('error', onError);
    // An Error discards the connection instead of returning it to the pool.
    client.release(lost);
  }
}

/** Collects the seq range per chain while rows stream past, for the closing summary line. An export
 *  within a scope (Z1) leaves out the entries of other workflows; where that cuts entries out of the
 *  middle of a chain it holds (a chain shared by several workflows' refusals), the summary says
 *  filtered, so the verifier does not take the hole for a removal. Otherwise it holds every entry of
 *  each chain it names up to that chain's last entry in scope, which is what the scoped checkpoints
 *  cover (./audit-checkpoints.ts), and stays unfiltered so a rewound chain is still reported. */
export function exportSummary(filtered: boolean, scope: WorkflowScope) {
  const chains: ExportSummary['export']['chains'] = {};
  let entries = 0;
  return {
    add(e: ExportedEntry): void {
      entries++;
      const c = chains[e.chain];
      if (!c) chains[e.chain] = { first_seq: e.seq, last_seq: e.seq, entries: 1 };
      else {
        c.first_seq = Math.min(c.first_seq, e.seq);
        c.last_seq = Math.max(c.last_seq, e.seq);
        c.entries++;
      }
    },
    line(): string {
      const holes = !scope.all && Object.values(chains).some((c) => c.entries !== c.last_seq - c.first_seq + 1);
      const summary: ExportSummary = {
        export: {
          format: 'effect-ledger-audit',
          version: 2,
          filtered: filtered || holes,
          // Scoped: chains shared with other workflows may start after seq 1. Neither scoped nor
          // filtered, the export holds every chain from seq 1, and the verifier requires it.
          scoped: !scope.all,
          entries,
          chains,
        },
      };
      return JSON.stringify(summary) + '\n';
    },
  };
}

export const CSV_COLUMNS = [
  'id', 'version', 'chain', 'seq', 'prev_hash', 'hash', 'at', 'actor_kind', 'actor_id', 'actor_label',
  'actor_role', 'action', 'subject_type', 'subject_id', 'run_id', 'before_state', 'after_state', 'reason',
  'outcome', 'detail', 'ip', 'user_agent', 'request_id',
] as const satisfies readonly (keyof ExportedEntry)[]; // prettier-ignore

export function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  // Quote always; neutralize spreadsheet formulas (a reason starting with "=" is data, not a formula).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function csvLine(e: ExportedEntry): string {
  return CSV_COLUMNS.map((c) => csvCell(e[c])).join(',') + '\r\n';
}

export function jsonLine(e: ExportedEntry): string {
  return JSON.stringify(e) + '\n';
}

export const isFiltered = (f: AuditFilter) => Object.values(f).some((v) => v !== undefined && v !== '');
export type { ExportedEntry };
