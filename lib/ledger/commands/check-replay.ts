// F6: a runtime asking to replay a run. When any target of the run is pending past its lease,
// unknown or stuck (or the run's tool history is known to be incomplete) the answer is "blocked"
// with every target's state: the human console is the way forward. Otherwise it lists what may
// proceed (never claimed, failed, or pending awaiting its claim) and what is skipped. Nothing is
// claimed here: the runtime still claims each target through the one claim path (S1, F3).
// A target never claimed proceeds only when it is in the run's approved plan: nothing is sent under
// a plan that was rejected or is still waiting for its approval (P1). A run with more targets than
// one answer lists is replayed from the console: an answer about its first targets only could miss
// a blocking one and would leave the rest out of both lists.
import { auditRefusal, appendAudit } from '@/lib/audit/append.ts';
import type { EffectState } from '@/lib/db/generated/enums.ts';
import type { CommandContext } from './common.ts';
import { readRun, readRunInput, RUN_TARGET_LIMIT, type RunTarget } from '@/lib/read-models/run-view.ts';
import { parseInput } from '../validate.ts';
import { requireRunScope } from '../scope.ts';

export interface ReplayTarget {
  target: string;
  key: string;
  epoch: number | null;
  state: EffectState | 'not_started';
  changedBy: string | null;
  changedAt: Date | null;
}

export type ReplayCheck =
  | { blocked: true; reason: string; targets: ReplayTarget[]; blocking: number }
  | { blocked: false; runId: string; proceed: ReplayTarget[]; skip: ReplayTarget[] };

export type ReplayDisposition = 'block' | 'proceed' | 'skip';

/** What a forced-by-runtime replay does with one target. Exhaustive over the states. */
export function replayDisposition(
  t: Pick<RunTarget, 'state' | 'awaitingClaim' | 'leaseExpired' | 'inPlan'>,
): ReplayDisposition {
  const state = t.state;
  if (state === null) return t.inPlan ? 'proceed' : 'skip';
  switch (state) {
    case 'pending':
      if (t.awaitingClaim) return 'proceed';
      return t.leaseExpired ? 'block' : 'skip';
    case 'failed':
      return 'proceed';
    case 'unknown':
    case 'stuck':
      return 'block';
    case 'done':
    case 'revoked':
      return 'skip';
    default:
      return state satisfies never;
  }
}

const view = (t: RunTarget): ReplayTarget => ({
  target: t.target,
  key: t.key,
  epoch: t.epoch,
  state: t.state ?? 'not_started',
  changedBy: t.changedBy,
  changedAt: t.changedAt,
});

export async function checkReplay(
  ctx: CommandContext,
  raw: unknown,
  options: { limit?: number } = {},
): Promise<ReplayCheck> {
  const limit = options.limit ?? RUN_TARGET_LIMIT;
  await requireRunScope(ctx, parseInput(readRunInput, raw).runId, 'run.replay_request');
  const read = await readRun(ctx, raw, { limit });
  const approved = read.plan?.status === 'approved';
  const run = { ...read, targets: read.targets.map((t) => ({ ...t, inPlan: t.inPlan && approved })) };
  const runId = run.run.id;
  const blocking = run.targets.filter((t) => replayDisposition(t) === 'block');
  const audit = {
    chain: `run:${runId}`,
    actor: ctx.actor,
    action: 'run.replay_request',
    subjectType: 'run',
    subjectId: runId,
    runId,
    request: ctx.request,
  } as const;
  if (blocking.length > 0 || !run.run.toolHistoryComplete || run.truncated) {
    const reason = blocking.length
      ? `${blocking.length} target(s) of run ${runId} are pending past their lease, unknown or stuck: resolve them in the console before replaying`
      : run.truncated
        ? `run ${runId} has more than ${limit} targets: replay it from the console (a forced replay)`
        : `the tool history of run ${runId} is incomplete: replay it from the console`;
    await auditRefusal(ctx.db, {
      ...audit,
      why: reason,
      detail: { blocking: blocking.length, targets: run.counts.total },
    });
    // Blocking targets first, then the rest, so the caller sees what to resolve.
    const rest = run.targets.filter((t) => replayDisposition(t) !== 'block');
    return { blocked: true, reason, blocking: blocking.length, targets: [...blocking, ...rest].map(view) };
  }
  const proceed = run.targets.filter((t) => replayDisposition(t) === 'proceed').map(view);
  const skip = run.targets.filter((t) => replayDisposition(t) === 'skip').map(view);
  await appendAudit(ctx.db, { ...audit, detail: { proceed: proceed.length, skip: skip.length } });
  return { blocked: false, runId, proceed, skip };
}
