// A run's timeline: every claim, provider call, provider answer, state change, decision and replay of
// one run, merged in time order (newest or oldest first), each with who by name and how long it took
// where that means something. Keyset-paged by (time to the microsecond, a tiebreaker naming the row),
// so no event is skipped or shown twice across pages, even among events of one microsecond. Within
// the viewer's scope (Z1): a run of a workflow they hold no role in is answered like a missing one.
import type { Db } from '../db/client.ts';
import type { WorkflowScope } from '@/lib/auth/grants.ts';
import { runInScope } from './run-in-scope.ts';
import { timelineCursor, type TimelineKind, type TimelineQuery } from './run-timeline-query.ts';
import { timelineSql, type TimelineSqlRow } from './run-timeline-sql.ts';

export interface TimelineEvent {
  /** Unique within the run's timeline (the cursor's tiebreaker). */
  id: string;
  at: Date;
  kind: TimelineKind;
  /** What happened: the audit action, "provider call", the provider's HTTP status, the replay's status. */
  what: string;
  /** Who by name: a person's email, a runtime key's name, "replay executor", the provider. */
  who: string | null;
  /** user, runtime, executor, reconciler, policy, system, or provider. */
  whoKind: string | null;
  target: string | null;
  key: string | null;
  epoch: number | null;
  fromState: string | null;
  toState: string | null;
  /** The reason given, or what a replay did. */
  note: string | null;
  /** Milliseconds: a provider call's time to its answer, the time an effect spent in the state a
   *  change left, a replay's run time. Null where none applies (or not finished yet). */
  durationMs: number | null;
}

export interface TimelinePage {
  workflow: string;
  events: TimelineEvent[];
  /** The cursor of the next page, or null on the last. */
  next: string | null;
}

/** The keys of a run that a target names, as stored or lower-cased (targets are stored normalized:
 *  an email in lower case), off effect_key (run_id, target). */
async function keysOfTarget(db: Db, runId: string, target: string): Promise<string[]> {
  const rows = await db.$queryRaw<{ key: string }[]>`
    SELECT key FROM effect_key WHERE run_id = ${runId}::uuid AND target IN (${target}, ${target.toLowerCase()})`;
  return rows.map((r) => r.key);
}

const toEvent = (r: TimelineSqlRow): TimelineEvent => ({
  id: r.tie,
  at: r.at,
  kind: r.kind,
  what: r.what,
  who: r.who,
  whoKind: r.who_kind,
  target: r.target,
  key: r.key,
  epoch: r.epoch,
  fromState: r.from_state,
  toState: r.to_state,
  note: r.note,
  durationMs: r.ms === null ? null : Math.max(0, Math.round(Number(r.ms) * 1000) / 1000),
});

/** null when the run id is malformed, the run is missing, or its workflow is outside the scope. */
export async function runTimeline(
  db: Db,
  runId: string,
  scope: WorkflowScope,
  q: TimelineQuery,
): Promise<TimelinePage | null> {
  const run = await runInScope(db, runId, scope);
  if (!run) return null;
  const keys = q.target === null ? null : await keysOfTarget(db, runId, q.target);
  const sql = keys !== null && keys.length === 0 ? null : timelineSql(runId, q, keys);
  const rows = sql ? await db.$queryRaw<TimelineSqlRow[]>(sql) : [];
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    workflow: run.workflow,
    events: page.map(toEvent),
    next: rows.length > q.limit && last ? timelineCursor(last.at_text, last.tie) : null,
  };
}
