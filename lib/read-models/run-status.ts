// The status the console shows for a run. The run row keeps 'crashed' for good: that is what happened
// to the agent. Once a forced replay of it has finished, the console says where the run ended up
// instead, so a run that was put right does not read as a live incident: 'recovered' when every
// approved target has exactly one done effect (P4), 'replayed' when some still do not.
import type { Db } from '../db/client.ts';

export type ShownRunStatus = 'running' | 'completed' | 'crashed' | 'replaying' | 'replayed' | 'recovered';

export const SHOWN_RUN_STATUS_TONE: Record<ShownRunStatus, 'blue' | 'green' | 'red' | 'amber'> = {
  running: 'blue',
  completed: 'green',
  crashed: 'red',
  replaying: 'amber',
  replayed: 'amber',
  recovered: 'green',
};

export function shownRunStatus(
  status: string,
  finishedReplay: boolean,
  exactlyOnce: { numerator: number; denominator: number } | null,
): ShownRunStatus {
  if (status !== 'crashed' || !finishedReplay) return status as ShownRunStatus;
  const whole =
    exactlyOnce !== null && exactlyOnce.denominator > 0 && exactlyOnce.numerator === exactlyOnce.denominator;
  return whole ? 'recovered' : 'replayed';
}

/** Of these runs, the ones with at least one forced replay that ran to its end. */
export async function runsWithFinishedReplay(db: Db, runIds: string[]): Promise<Set<string>> {
  if (runIds.length === 0) return new Set();
  const rows = await db.replay.findMany({
    where: { runId: { in: runIds }, status: 'completed' },
    select: { runId: true },
    distinct: ['runId'],
  });
  return new Set(rows.map((r) => r.runId));
}
