// Names for the subjects the audit trail records by id: a person by email, a runtime key by its name,
// a run by its workflow and event, a replay by its run (also when its executor is the actor). One query
// per kind for a whole page of entries.
import type { Db } from '../db/client.ts';
import { userLabels } from './admin.ts';
import { isUuid } from '../uuid.ts';

export const subjectRef = (type: string, id: string) => `${type}:${id}`;

/** `subjectRef(type, id)` -> a readable name, for the subjects of these entries that have one. */
export async function subjectNames(
  db: Db,
  entries: readonly { subjectType: string; subjectId: string; actorLabel?: string }[],
): Promise<Record<string, string>> {
  const ids = (type: string) => [
    ...new Set(entries.filter((e) => e.subjectType === type && isUuid(e.subjectId)).map((e) => e.subjectId)),
  ];
  // A replay's executor is labelled `replay executor <id>` (lib/replay/executor.ts).
  const replayIds = [
    ...new Set([
      ...ids('replay'),
      ...entries.map((e) => executorReplayId(e.actorLabel)).filter((id): id is string => Boolean(id && isUuid(id))),
    ]),
  ];
  const [users, keys, runs, replays] = await Promise.all([
    userLabels(db, ids('user')),
    ids('runtime_key').length
      ? db.runtimeKey.findMany({ where: { id: { in: ids('runtime_key') } }, select: { id: true, name: true } })
      : [],
    ids('run').length
      ? db.run.findMany({
          where: { id: { in: ids('run') } },
          select: { id: true, workflow: true, event: { select: { triggerId: true } } },
        })
      : [],
    replayIds.length
      ? db.$queryRaw<{ id: string; workflow: string; trigger_id: string }[]>`
          SELECT rp.id::text AS id, r.workflow, e.trigger_id FROM replay rp JOIN run r ON r.id = rp.run_id
            JOIN event e ON e.id = r.event_id WHERE rp.id = ANY(${replayIds}::uuid[])`
      : [],
  ]);
  const names: Record<string, string> = {};
  for (const [id, email] of Object.entries(users)) names[subjectRef('user', id)] = email;
  for (const k of keys) names[subjectRef('runtime_key', k.id)] = `key ${k.name}`;
  for (const r of runs) names[subjectRef('run', r.id)] = `run ${r.workflow} · ${r.event.triggerId}`;
  for (const r of replays) names[subjectRef('replay', r.id)] = `replay of ${r.workflow} · ${r.trigger_id}`;
  return names;
}

/** The replay whose executor wrote an entry, from the executor's label. */
export function executorReplayId(actorLabel: string | undefined): string | undefined {
  return actorLabel?.match(/^replay executor (\S+)$/)?.[1];
}
