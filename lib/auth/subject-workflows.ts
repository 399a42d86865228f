// Which workflow a console action is about (Z1, Z2): the guard asks before it checks a permission,
// so every check that concerns a run, effect, plan, replay or approval names its workflow. A subject
// that does not exist resolves to nothing, and the command then answers that it is missing.
import type { DbOrTx } from '../db/client.ts';
import { isUuid } from '../uuid.ts';

export type WorkflowSubjectType = 'run' | 'plan' | 'effect' | 'replay' | 'approval';

export interface SubjectWorkflows {
  /** Every workflow the subject touches (a bulk action over keys may span several). */
  workflows: string[];
  /** The run, when the subject has exactly one (a refusal is filed under it). */
  runId: string | null;
}

async function ofRuns(db: DbOrTx, runIds: (string | null | undefined)[]): Promise<SubjectWorkflows | null> {
  const ids = [...new Set(runIds.filter((id): id is string => typeof id === 'string' && isUuid(id)))];
  if (ids.length === 0) return null;
  const runs = await db.run.findMany({ where: { id: { in: ids } }, select: { id: true, workflow: true } });
  if (runs.length === 0) return null;
  return {
    workflows: [...new Set(runs.map((r) => r.workflow))].sort(),
    runId: runs.length === 1 ? runs[0]!.id : null,
  };
}

/** The runs of effect keys: claimed keys through effect_key, planned ones through their plan item. */
async function runsOfKeys(db: DbOrTx, keys: readonly string[]): Promise<string[]> {
  const claimed = await db.effectKey.findMany({
    where: { key: { in: [...keys] } },
    select: { key: true, runId: true },
  });
  const found = new Set(claimed.map((k) => k.key));
  const missing = keys.filter((k) => !found.has(k));
  const planned = missing.length
    ? await db.planItem.findMany({ where: { key: { in: missing } }, select: { runId: true }, distinct: ['runId'] })
    : [];
  return [...claimed.map((k) => k.runId), ...planned.map((p) => p.runId)];
}

export async function workflowsOfSubject(
  db: DbOrTx,
  type: string,
  ids: readonly string[],
): Promise<SubjectWorkflows | null> {
  switch (type) {
    case 'run':
      return ofRuns(db, [...ids]);
    case 'plan': {
      const plans = await db.plan.findMany({ where: { id: { in: ids.filter((id) => isUuid(id)) } } });
      return ofRuns(
        db,
        plans.map((p) => p.runId),
      );
    }
    case 'replay': {
      const replays = await db.replay.findMany({
        where: { id: { in: ids.filter((id) => isUuid(id)) } },
        select: { runId: true },
      });
      return ofRuns(
        db,
        replays.map((r) => r.runId),
      );
    }
    case 'approval': {
      const requests = await db.approvalRequest.findMany({
        where: { id: { in: ids.filter((id) => isUuid(id)) } },
        select: { runId: true, payload: true },
      });
      // A bump request names the run of its first key only; its keys may span other runs, and
      // deciding it bumps every one of them, so the runs of all its keys count too.
      const keys = requests.flatMap((r) => keysOfPayload(r.payload));
      const runIds = [...requests.map((r) => r.runId), ...(keys.length ? await runsOfKeys(db, keys) : [])];
      return ofRuns(db, runIds);
    }
    case 'effect':
      return ofRuns(db, await runsOfKeys(db, ids));
    default:
      return null;
  }
}

/** A bump request's payload lists its items by key. */
export function keysOfPayload(payload: unknown): string[] {
  const items = (payload as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return [];
  return items.map((i) => (i as { key?: unknown } | null)?.key).filter((k): k is string => typeof k === 'string');
}
