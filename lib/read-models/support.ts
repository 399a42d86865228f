// Support queue: every unknown key across runs, oldest first (index effect_key(state, changed_at)),
// with the latest evidence reconciliation (or the runtime) recorded for its current epoch.
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import { decodeCursor, encodeCursor, likeLiteral, runIdRange, TIMESTAMP_TEXT } from './common.ts';
import { runInScopeSql, type WorkflowScope } from '@/lib/auth/grants.ts';

export interface UnknownRow {
  key: string;
  target: string;
  tool: string;
  action: string;
  runId: string;
  /** The run's workflow: what a person may do on the row depends on their roles there (Z1). */
  workflow: string;
  epoch: number;
  since: Date;
  changedBy: string;
  evidence: unknown;
  evidenceBy: string | null;
  evidenceAt: Date | null;
}

type Raw = {
  key: string;
  target: string;
  tool: string;
  action: string;
  run_id: string;
  workflow: string;
  current_epoch: number;
  changed_at: Date;
  position: string;
  changed_by: string;
  evidence: unknown;
  actor_id: string | null;
  at: Date | null;
};

export interface SupportFilter {
  /** One run, by id. */
  runId?: string;
  workflow?: string;
  /** The start of the normalized target (a recipient), any case. */
  target?: string;
}

function filterSql(filter: SupportFilter): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  // The whole run id or the short id the console shows; text that starts no UUID matches no run.
  const run = filter.runId ? runIdRange(filter.runId) : null;
  if (filter.runId)
    parts.push(run ? Prisma.sql`AND k.run_id BETWEEN ${run.lo}::uuid AND ${run.hi}::uuid` : Prisma.sql`AND FALSE`);
  // The start of a workflow's name, any case ("spring" finds spring_campaign).
  if (filter.workflow)
    parts.push(
      Prisma.sql`AND k.run_id IN (SELECT id FROM run WHERE lower(workflow) LIKE ${`${likeLiteral(filter.workflow.toLowerCase())}%`})`,
    );
  if (filter.target)
    parts.push(
      Prisma.sql`AND lower(k.target) LIKE ${`${filter.target.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`,
    );
  return parts.length ? Prisma.join(parts, ' ') : Prisma.empty;
}

export async function supportQueue(
  db: Db,
  scope: WorkflowScope,
  options: { cursor?: string; limit?: number } & SupportFilter = {},
) {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 200);
  const cursor = decodeCursor(
    options.cursor,
    (v): v is [string, string] =>
      v.length === 2 && typeof v[0] === 'string' && TIMESTAMP_TEXT.test(v[0]) && typeof v[1] === 'string',
  );
  const after = cursor
    ? Prisma.sql`AND (k.changed_at, k.key) > (${cursor[0]}::timestamptz, ${cursor[1]})`
    : Prisma.empty;
  const raw = await db.$queryRaw<Raw[]>`
    SELECT k.key, k.target, k.tool, k.action, k.run_id, r.workflow, k.current_epoch, k.changed_at, k.changed_at::text AS position, k.changed_by, t.evidence, t.actor_id, t.at
    FROM effect_key k
    JOIN run r ON r.id = k.run_id
    LEFT JOIN LATERAL (SELECT evidence, actor_id, at FROM effect_transition et
                       WHERE et.key = k.key AND et.epoch = k.current_epoch AND et.evidence IS NOT NULL ORDER BY et.id DESC LIMIT 1) t ON TRUE
    WHERE k.state = 'unknown' AND ${runInScopeSql(scope, Prisma.sql`k.run_id`)} ${filterSql(options)} ${after}
    ORDER BY k.changed_at, k.key LIMIT ${limit + 1}`;
  const page = raw.slice(0, limit);
  const last = page[page.length - 1];
  // Z1: the count covers only the workflows the viewer may see, like the rows.
  const [{ n: total }] = await db.$queryRaw<[{ n: number }]>`
    SELECT count(*)::int AS n FROM effect_key k
    WHERE k.state = 'unknown' AND ${runInScopeSql(scope, Prisma.sql`k.run_id`)} ${filterSql(options)}`;
  return {
    total,
    rows: page.map((r): UnknownRow => ({
      key: r.key,
      target: r.target,
      tool: r.tool,
      action: r.action,
      runId: r.run_id,
      workflow: r.workflow,
      epoch: r.current_epoch,
      since: r.changed_at,
      changedBy: r.changed_by,
      evidence: r.evidence,
      evidenceBy: r.actor_id,
      evidenceAt: r.at,
    })),
    next: raw.length > limit && last ? encodeCursor([last.position, last.key]) : null,
  };
}
