// Audit trail: filtered, keyset-paged by id (newest first). The same filter drives the CSV / JSON
// Lines export (A5, ./audit-export.ts).
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import { invalid } from '../core/errors.ts';
import { runInScopeSql, type WorkflowScope } from '@/lib/auth/grants.ts';
import { dateRangeProblem, runIdRange } from './common.ts';

export interface AuditFilter {
  actor?: string;
  action?: string;
  run?: string;
  target?: string;
  from?: string;
  to?: string;
  outcome?: string;
}

export function auditFilterFrom(params: URLSearchParams | Record<string, string | string[] | undefined>): AuditFilter {
  const get = (k: string) => {
    const v = params instanceof URLSearchParams ? params.get(k) : params[k];
    // NUL cannot reach PostgreSQL text (the query would fail): dropped, as the console's one() does.
    const s = (Array.isArray(v) ? v[0] : v)?.replace(/\u0000/g, '');
    return s && s.trim() ? s.trim() : undefined;
  };
  return {
    actor: get('actor'),
    action: get('action'),
    run: get('run'),
    target: get('target'),
    from: get('from'),
    to: get('to'),
    outcome: get('outcome'),
  };
}

/** The filter as SQL, within the viewer's scope (Z1): an entry about a run of a workflow they hold no
 *  role in, or about no run at all (users, keys, tools), is seen only with an all-workflows grant. */
export function whereOf(f: AuditFilter, scope: WorkflowScope): Prisma.Sql {
  const w: Prisma.Sql[] = [runInScopeSql(scope, Prisma.sql`a.run_id`)];
  if (f.actor) w.push(Prisma.sql`(a.actor_label ILIKE ${`%${f.actor}%`} OR a.actor_id = ${f.actor})`);
  // The text matches anywhere in the action's name ("revoke" finds effect.revoke and
  // runtime_key.revoke), LIKE's wildcards taken literally.
  if (f.action) w.push(Prisma.sql`a.action ILIKE ${`%${f.action.replace(/[\\%_]/g, '\\$&')}%`}`);
  // The whole run id or the short id shown everywhere; text that starts no UUID matches nothing
  // (ignoring it would list the whole trail as if it matched).
  const run = f.run ? runIdRange(f.run) : null;
  if (f.run) w.push(run ? Prisma.sql`a.run_id BETWEEN ${run.lo}::uuid AND ${run.hi}::uuid` : Prisma.sql`FALSE`);
  // A recipient, or an effect's key as the Subject column shows it.
  if (f.target)
    w.push(
      Prisma.sql`a.subject_type = 'effect' AND (a.subject_id = ${f.target} OR a.subject_id IN (SELECT key FROM effect_key WHERE target = ${f.target.toLowerCase()} OR target = ${f.target}))`,
    );
  if (f.outcome === 'ok' || f.outcome === 'refused') w.push(Prisma.sql`a.outcome = ${f.outcome}`);
  const from = f.from ? new Date(f.from) : null;
  const to = f.to ? new Date(f.to) : null;
  if (from && !Number.isNaN(from.getTime())) w.push(Prisma.sql`a.at >= ${from}`);
  if (to && !Number.isNaN(to.getTime())) w.push(Prisma.sql`a.at < ${to}`);
  return Prisma.join(w, ' AND ');
}

/** What is wrong with a filter as a whole (its fields each parse): an inverted date range. */
export function auditFilterProblem(f: AuditFilter): { field: 'to'; message: string } | null {
  return dateRangeProblem(f.from, f.to);
}

export interface AuditRow {
  id: string;
  at: Date;
  chain: string;
  seq: number;
  actorKind: string;
  actorLabel: string;
  actorRole: string | null;
  action: string;
  subjectType: string;
  subjectId: string;
  runId: string | null;
  beforeState: string | null;
  afterState: string | null;
  reason: string | null;
  outcome: string;
  detail: unknown;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  hash: string;
}

type Raw = Omit<
  AuditRow,
  | 'id'
  | 'actorKind'
  | 'actorLabel'
  | 'actorRole'
  | 'subjectType'
  | 'subjectId'
  | 'runId'
  | 'beforeState'
  | 'afterState'
  | 'userAgent'
  | 'requestId'
> & {
  id: bigint;
  actor_kind: string;
  actor_label: string;
  actor_role: string | null;
  subject_type: string;
  subject_id: string;
  run_id: string | null;
  before_state: string | null;
  after_state: string | null;
  user_agent: string | null;
  request_id: string | null;
};

const toRow = (r: Raw): AuditRow => ({
  id: String(r.id),
  at: r.at,
  chain: r.chain,
  seq: r.seq,
  actorKind: r.actor_kind,
  actorLabel: r.actor_label,
  actorRole: r.actor_role,
  action: r.action,
  subjectType: r.subject_type,
  subjectId: r.subject_id,
  runId: r.run_id,
  beforeState: r.before_state,
  afterState: r.after_state,
  reason: r.reason,
  outcome: r.outcome,
  detail: r.detail,
  ip: r.ip,
  userAgent: r.user_agent,
  requestId: r.request_id,
  hash: r.hash,
});

async function batch(
  db: Db,
  f: AuditFilter,
  scope: WorkflowScope,
  beforeId: bigint | null,
  limit: number,
  order: 'desc' | 'asc' = 'desc',
): Promise<AuditRow[]> {
  const cursor =
    beforeId === null
      ? Prisma.empty
      : order === 'desc'
        ? Prisma.sql`AND a.id < ${beforeId}`
        : Prisma.sql`AND a.id > ${beforeId}`;
  const rows = await db.$queryRaw<Raw[]>`
    SELECT a.id, a.at, a.chain, a.seq, a.actor_kind::text, a.actor_label, a.actor_role, a.action, a.subject_type, a.subject_id, a.run_id,
           a.before_state, a.after_state, a.reason, a.outcome, a.detail, a.ip, a.user_agent, a.request_id, a.hash
    FROM audit_entry a WHERE ${whereOf(f, scope)} ${cursor}
    ORDER BY a.id ${order === 'desc' ? Prisma.sql`DESC` : Prisma.sql`ASC`} LIMIT ${limit}`;
  return rows.map(toRow);
}

export async function auditPage(db: Db, f: AuditFilter, scope: WorkflowScope, cursor?: string, limit = 50) {
  const before = cursor && /^\d+$/.test(cursor) ? BigInt(cursor) : null;
  const rows = await batch(db, f, scope, before, limit + 1);
  const page = rows.slice(0, limit);
  return { rows: page, next: rows.length > limit ? page[page.length - 1]!.id : null };
}

/** The export's format and filter, checked before anything streams: a bad parameter is a 422 naming
 *  it, not a 200 that breaks mid-stream or silently exports more than asked. */
export function exportRequestFrom(p: URLSearchParams): { format: 'csv' | 'jsonl'; filter: AuditFilter } {
  checkExportParams(p);
  return { format: p.get('format') === 'jsonl' ? 'jsonl' : 'csv', filter: auditFilterFrom(p) };
}

function checkExportParams(p: URLSearchParams): void {
  const format = p.get('format');
  if (format !== null && format !== 'csv' && format !== 'jsonl') throw invalid('format', 'format: csv or jsonl');
  for (const name of ['actor', 'action', 'run', 'target', 'from', 'to', 'outcome']) {
    const value = p.get(name)?.trim();
    if (!value) continue;
    if (value.length > 1000) throw invalid(name, `${name}: at most 1,000 characters`);
    if (/[\u0000\p{Cs}]/u.test(value)) throw invalid(name, `${name}: contains a NUL character or a lone surrogate`);
    if ((name === 'from' || name === 'to') && Number.isNaN(new Date(value).getTime()))
      throw invalid(name, `${name}: not a date (e.g. 2026-11-30T10:00)`);
    if (name === 'run' && !runIdRange(value))
      throw invalid(name, 'run: a run id, or its first 8 characters as the console shows it');
    if (name === 'outcome' && value !== 'ok' && value !== 'refused') throw invalid(name, 'outcome: ok or refused');
  }
  const range = auditFilterProblem(auditFilterFrom(p));
  if (range) throw invalid(range.field, range.message);
}
