// npm run prune: prunes retired runs now (rule T1, lib/retention/prune.ts) with the policy of
// RETENTION_WINDOW_DAYS and RETENTION_BATCH_RUNS, then old notifications
// (lib/retention/prune-notifications.ts, NOTIFY_RETENTION_READ_DAYS and NOTIFY_RETENTION_DAYS),
// printing a progress line per committed batch. `-- --window-days N` overrides the runs' window for
// this run. Against DATABASE_URL, or the embedded server of `npm start`. Exits 0 with the totals; 2
// on bad arguments.
import { createDb } from '@/lib/db/client.ts';
import { provisionDatabase } from '@/lib/db/provision.ts';
import { env } from '@/lib/env.ts';
import { pruneNotifications } from '@/lib/retention/prune-notifications.ts';
import { pruneRetiredRuns } from '@/lib/retention/prune.ts';
import { notificationRetentionFromEnv, retentionPolicyFromEnv } from '@/lib/retention/schedule.ts';

function parseArgs(args: string[]): { windowDays?: number } {
  if (args.length === 0) return {};
  const days = Number(args[1]);
  if (args.length === 2 && args[0] === '--window-days' && Number.isInteger(days) && days >= 1)
    return { windowDays: days };
  console.error('usage: npm run prune [-- --window-days <whole days, at least 1>]');
  process.exit(2);
}

const { windowDays } = parseArgs(process.argv.slice(2));
const policy = { ...retentionPolicyFromEnv(), ...(windowDays ? { windowDays } : {}) };
const notificationPolicy = notificationRetentionFromEnv();
const actor = { kind: 'system', id: 'prune-cli', label: 'npm run prune' } as const;
const provisioned = env().DATABASE_URL ? null : await provisionDatabase({ log: () => undefined });
const db = createDb(env().DATABASE_URL ?? provisioned!.appUrl, 2);
try {
  console.log(`[prune] runs retired more than ${policy.windowDays} days ago, ${policy.batchRuns} per batch`);
  const r = await pruneRetiredRuns(db, {
    actor,
    policy,
    onBatch: (t) =>
      console.log(
        `[prune] batch ${t.batches}: ${t.runs} runs so far (${t.idempotencyRecords} idempotency records, ${t.rawResponses} raw responses, ${t.replayItems} replay items)`,
      ),
  });
  console.log(
    `[prune] done: ${r.runs} runs in ${r.batches} batches; ${r.idempotencyRecords} idempotency records, ${r.rawResponses} raw responses, ${r.replayItems} replay items pruned; keys and the audit trail kept`,
  );
  console.log(
    `[prune] read notifications older than ${notificationPolicy.readDays} days, any older than ${notificationPolicy.allDays} days`,
  );
  const n = await pruneNotifications(db, {
    actor,
    policy: notificationPolicy,
    onBatch: (t) => console.log(`[prune] notification batch ${t.batches}: ${t.read + t.unread} so far`),
  });
  console.log(
    `[prune] done: ${n.read + n.unread} notifications in ${n.batches} batches (${n.read} read, ${n.unread} unread, ${n.emails} outbox rows)`,
  );
} finally {
  await db.$disconnect();
  await provisioned?.stop();
}
