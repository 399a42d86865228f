// The audit export as evidence (A2, A5): every entry with everything its hash covers (chain, seq,
// prev_hash, hash, canonical form version, the actor's kind, id, label and role, action, subject,
// states before and after, reason, outcome, detail, source address and user agent, request id, and
// the time to the microsecond as the hash saw it), oldest first, a thousand rows at a time. JSON Lines
// ends with a summary line stating the seq range exported per chain, so an export of part of a chain
// says which part it is; `npm run audit:verify` checks a file with no database (lib/sdk/audit/verify-export.ts).
import type { ExportedEntry } from '../sdk/audit/canonical.ts';
import type { ExportSummary } from '../sdk/audit/verify-export.ts';
import type { Db } from '../db/client.ts';
import { whereOf, type AuditFilter } from './audit.ts';
import type { WorkflowScope } from '@/lib/auth/grants.ts';

const BATCH = 1000;

/** Every matching entry the viewer may see (Z1), oldest first (by id), in constant memory for the rows. */
export async function* auditExportStream(db: Db, f: AuditFilter, scope: WorkflowScope): AsyncGenerator<ExportedEntry> {
  let after = 0n;
  for (;;) {
    const rows = await db.$queryRaw<(Omit<ExportedEntry, 'id'> & { id: bigint })[]>`
      SELECT a.id, a.canon_version::int AS version, a.chain, a.seq, a.prev_hash, a.hash,
             to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
             a.actor_kind::text AS actor_kind, a.actor_id, a.actor_label, a.actor_role, a.action,
             a.subject_type, a.subject_id, a.run_id::text AS run_id, a.before_state, a.after_state,
             a.reason, a.outcome, a.detail, a.ip, a.user_agent, a.request_id
      FROM audit_entry a WHERE ${whereOf(f, scope)} AND a.id > ${after}
      ORDER BY a.id LIMIT ${BATCH}`;
    for (const r of rows) yield { ...r, id: String(r.id) };
    if (rows.length < BATCH) return;
    after = rows.at(-1)!.id;
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
        export: { format: 'effect-ledger-audit', version: 2, filtered: filtered || holes, entries, chains },
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
