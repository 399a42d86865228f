// The scheduled prune (T1): every RETENTION_INTERVAL_MINUTES the worker that leads (lib/ops/leader.ts)
// prunes retired runs, then old notifications; followers do nothing, so one pruner runs at a time
// across all workers (and SKIP LOCKED in the commands keeps a concurrent `npm run prune` from
// touching the same rows).
import type { Db } from '@/lib/db/client.ts';
import { env } from '@/lib/env.ts';
import type { Actor } from '@/lib/core/actor.ts';
import { pruneNotifications, validNotificationRetention, type NotificationRetention } from './prune-notifications.ts';
import { pruneRetiredRuns, type RetentionPolicy } from './prune.ts';

export const RETENTION_POLICY_ACTOR: Actor = { kind: 'policy', id: 'retention', label: 'retention policy (T1)' };

/** Batches per scheduled pass: a pass stays short and the next one goes on where it stopped. */
const MAX_BATCHES_PER_PASS = 50;

export function retentionPolicyFromEnv(): RetentionPolicy {
  const e = env();
  return { windowDays: e.RETENTION_WINDOW_DAYS, batchRuns: e.RETENTION_BATCH_RUNS };
}

/** Notifications per prune transaction: small enough to keep each one short. */
const NOTIFICATION_BATCH_ROWS = 1000;

/** The notification windows of the environment; a long window shorter than the read one is refused. */
export function notificationRetentionFromEnv(): NotificationRetention {
  const e = env();
  const policy = {
    readDays: e.NOTIFY_RETENTION_READ_DAYS,
    allDays: e.NOTIFY_RETENTION_DAYS,
    batchRows: NOTIFICATION_BATCH_ROWS,
  };
  if (!validNotificationRetention(policy))
    throw new Error(
      `Invalid environment: NOTIFY_RETENTION_DAYS (${policy.allDays}) must be at least NOTIFY_RETENTION_READ_DAYS (${policy.readDays})`,
    );
  return policy;
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
  notificationPolicy?: NotificationRetention;
  log: (line: string) => void;
}): RetentionSchedule {
  if (options.intervalMs <= 0) return { stop: async () => undefined };
  // Read once, here: a worker with contradictory windows refuses to start instead of logging each pass.
  const notificationPolicy = options.notificationPolicy ?? notificationRetentionFromEnv();
  const { db, log } = options;
  const pruneBoth = async () => {
    try {
      const r = await pruneRetiredRuns(db, {
        actor: RETENTION_POLICY_ACTOR,
        policy: options.policy ?? retentionPolicyFromEnv(),
        maxBatches: MAX_BATCHES_PER_PASS,
      });
      if (r.runs > 0)
        log(
          `retention: pruned ${r.runs} runs (${r.idempotencyRecords} idempotency records, ${r.rawResponses} raw responses, ${r.replayItems} replay items)`,
        );
    } catch (error) {
      log(`retention: prune failed: ${(error as Error).message}`);
    }
    // Independent of the runs' prune: one failing does not hold the other back.
    try {
      const n = await pruneNotifications(db, {
        actor: RETENTION_POLICY_ACTOR,
        policy: notificationPolicy,
        maxBatches: MAX_BATCHES_PER_PASS,
      });
      if (n.read + n.unread > 0)
        log(`retention: pruned ${n.read + n.unread} notifications (${n.unread} unread, ${n.emails} outbox rows)`);
    } catch (error) {
      log(`retention: notification prune failed: ${(error as Error).message}`);
    }
  };
  let pass: Promise<void> = Promise.resolve();
  let running = false;
  const tick = () => {
    if (running || !options.isLeader()) return;
    running = true;
    pass = pruneBoth().finally(() => {
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
