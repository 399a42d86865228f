// Names for the subjects the audit trail records by id: a person by email, a runtime key by its name,
// a run by its workflow and event. One query per kind for a whole page of entries.
import type { Db } from '../db/client.ts';
import { userLabels } from './admin.ts';
import { isUuid } from '../uuid.ts';

export const subjectRef = (type: string, id: string) => `${type}:${id}`;

/** `subjectRef(type, id)` -> a readable name, for the subjects of these entries that have one. */
export async function subjectNames(
  db: Db,
  entries: readonly { subjectType: string; subjectId: string }[],
): Promise<Record<string, string>> {
  const ids = (type: string) => [
    ...new Set(entries.filter((e) => e.subjectType === type && isUuid(e.subjectId)).map((e) => e.subjectId)),
  ];
  const [users, keys, runs] = await Promise.all([
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
  ]);
  const names: Record<string, string> = {};
  for (const [id, email] of Object.entries(users)) names[subjectRef('user', id)] = email;
  for (const k of keys) names[subjectRef('runtime_key', k.id)] = `key ${k.name}`;
  for (const r of runs) names[subjectRef('run', r.id)] = `run ${r.workflow} · ${r.event.triggerId}`;
  return names;
}
