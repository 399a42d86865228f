// The scheduled prune (T1): every RETENTION_INTERVAL_MINUTES the worker that leads (lib/ops/leader.ts)
// prunes retired runs; followers do nothing, so one pruner runs at a time across all workers (and
// SKIP LOCKED in the command keeps a concurrent `npm run prune` from touching the same runs).
import type { Db } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import type { Actor } from '@/lib/ledger/actor.ts';
import { pruneRetiredRuns, type RetentionPolicy } from './prune.ts';

export const RETENTION_POLICY_ACTOR: Actor = { kind: 'policy', id: 'retention', label: 'retention policy (T1)' };

/** Batches per scheduled pass: a pass stays short and the next one goes on where it stopped. */
const MAX_BATCHES_PER_PASS = 50;

export function retentionPolicyFromEnv(): RetentionPolicy {
  const e = env();
  return { windowDays: e.RETENTION_WINDOW_DAYS, batchRuns: e.RETENTION_BATCH_RUNS };
}

export interface RetentionSchedule {
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

export function startRetentionSchedule(options: {
  db: Db;
  isLeader: () => boolean;
  intervalMs: number;
  policy?: RetentionPolicy;
  log: (line: string) => void;
}): RetentionSchedule {
  if (options.intervalMs <= 0) return { stop: async () => undefined };
  let pass: Promise<void> = Promise.resolve();
  let running = false;
  const tick = () => {
    if (running || !options.isLeader()) return;
    running = true;
    pass = pruneRetiredRuns(options.db, {
      actor: RETENTION_POLICY_ACTOR,
      policy: options.policy ?? retentionPolicyFromEnv(),
      maxBatches: MAX_BATCHES_PER_PASS,
    })
      .then((r) => {
        if (r.runs > 0)
          options.log(
            `retention: pruned ${r.runs} runs (${r.idempotencyRecords} idempotency records, ${r.rawResponses} raw responses, ${r.replayItems} replay items)`,
          );
      })
      .catch((error: unknown) => options.log(`retention: prune failed: ${(error as Error).message}`))
      .finally(() => {
        running = false;
      });
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
