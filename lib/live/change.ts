// What the console's change feed says happened, and which page cares. Pure (no database, no HTTP), so
// the browser's live-refresh component filters events with the same definition the server sends.

/** What kind of state moved. `unknown`: an effect entered or left the unknown state (the support queue). */
export const LIVE_TOPICS = ['effect', 'unknown', 'plan', 'replay', 'approval', 'run'] as const;
export type LiveTopic = (typeof LIVE_TOPICS)[number];

/** One tick's worth of changes (at most one per second per process). */
export interface LiveChange {
  /** The runs whose state moved; null when too many moved to list (every page refreshes). */
  runs: string[] | null;
  /** Their workflows, for pages scoped to a workflow. */
  workflows: string[];
  topics: LiveTopic[];
}

/** What a page shows: a subject (one run) and the kinds of change it displays. */
export interface LiveInterest {
  runId?: string;
  topics: readonly LiveTopic[];
}

/** More runs than this in one tick are sent as "many" (runs: null) rather than listed. */
export const MAX_RUNS_PER_CHANGE = 200;

export function changeMatches(change: LiveChange, interest: LiveInterest): boolean {
  if (!change.topics.some((t) => interest.topics.includes(t))) return false;
  if (!interest.runId || change.runs === null) return true;
  return change.runs.includes(interest.runId);
}

/** Audit actions that record a read, not a change: no page has anything new to show. */
const READS = new Set(['run.read', 'effect.read']);

/** The topics one audit entry stands for (none for reads, refusals and entries about people or keys). */
export function topicsOfAudit(entry: {
  action: string;
  outcome: string;
  beforeState: string | null;
  afterState: string | null;
}): LiveTopic[] {
  if (entry.outcome !== 'ok' || READS.has(entry.action)) return [];
  const family = entry.action.slice(0, entry.action.indexOf('.'));
  const topics: LiveTopic[] = [];
  if (family === 'effect' || family === 'attempt') topics.push('effect');
  else if ((LIVE_TOPICS as readonly string[]).includes(family)) topics.push(family as LiveTopic);
  if (entry.beforeState === 'unknown' || entry.afterState === 'unknown') topics.push('unknown');
  return topics;
}

/** Merges the changes seen in one tick into one event; null when nothing a page shows moved. */
export function mergeChanges(
  parts: { runId: string | null; workflow: string | null; topics: readonly LiveTopic[] }[],
): LiveChange | null {
  const runs = new Set<string>();
  const workflows = new Set<string>();
  const topics = new Set<LiveTopic>();
  for (const p of parts) {
    if (p.topics.length === 0) continue;
    for (const t of p.topics) topics.add(t);
    if (p.runId) runs.add(p.runId);
    if (p.workflow) workflows.add(p.workflow);
  }
  if (topics.size === 0) return null;
  return {
    runs: runs.size > MAX_RUNS_PER_CHANGE ? null : [...runs].sort(),
    workflows: [...workflows].sort(),
    topics: LIVE_TOPICS.filter((t) => topics.has(t)),
  };
}
