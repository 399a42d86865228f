// Retention of notifications on the real database: read notifications older than the read window and
// any older than the long window are pruned with their outbox rows, in audited batches, by the
// command, by `npm run prune` and by the leader's scheduled pass; the rest stay, and an event told
// before is never told again after its notifications were pruned.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyAuditTrail } from '@/lib/audit/verify.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { tell } from '@/lib/notifications/tell.ts';
import { pruneNotifications } from '@/lib/retention/prune-notifications.ts';
import { notificationRetentionFromEnv, startRetentionSchedule } from '@/lib/retention/schedule.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { runScript, scriptEnv } from '../helpers/processes.ts';
import { makePerson } from './notifications-fixtures.ts';

const t = await createTestDatabase({ poolSize: 6 });
const policy = { readDays: 30, allDays: 180, batchRows: 100 };
const systemActor = { kind: 'system', id: 'test', label: 'notification retention test' } as const;

/** A notification `days` old, read an hour after it arrived or not, with an outbox row if asked. */
async function aged(userId: string, days: number, read: boolean, email?: 'sent' | 'pending'): Promise<string> {
  const id = randomUUID();
  await t.owner(
    `INSERT INTO notification (id, user_id, kind, subject_id, title, body, link, created_at, read_at)
     VALUES ($1, $2, 'replay.finished', $3, 't', 'b', '/runs', now() - make_interval(days => $4),
             CASE WHEN $5 THEN now() - make_interval(days => $4) + interval '1 hour' END)`,
    [id, userId, randomUUID(), days, read],
  );
  if (email)
    await t.owner(
      `INSERT INTO notification_email (notification_id, to_address, status) VALUES ($1, 'p@example.com', $2)`,
      [id, email],
    );
  return id;
}

async function remaining(ids: string[]): Promise<string[]> {
  const { rows } = await t.owner<{ id: string }>(`SELECT id::text FROM notification WHERE id = ANY($1::uuid[])`, [ids]);
  return rows.map((r) => r.id).sort();
}

const emailsOf = async (ids: string[]) =>
  (await t.owner(`SELECT 1 FROM notification_email WHERE notification_id = ANY($1::uuid[])`, [ids])).rowCount;

const pruneEntries = () => t.db.auditEntry.count({ where: { action: 'retention.prune', subjectId: 'notifications' } });

describe('notification retention', () => {
  it('prunes read notifications past the read window and all past the long one, with their outbox rows; audited; nothing twice', async () => {
    const bob = await makePerson(t.db, 'operator');
    const carol = await makePerson(t.db, 'operator');
    const pruned = [
      await aged(bob.id, 40, true),
      await aged(bob.id, 200, false),
      await aged(bob.id, 200, true),
      await aged(carol.id, 40, true, 'sent'),
    ];
    const kept = [
      await aged(bob.id, 40, false), // unread, inside the long window
      await aged(bob.id, 10, true), // read, inside the read window
      await aged(carol.id, 40, false, 'pending'),
    ];
    // A notification told through the real path, then read long ago.
    const subjectId = randomUUID();
    const event = {
      kind: 'replay.finished' as const,
      subjectId,
      recipients: [bob.id],
      title: 't',
      body: 'b',
      link: '/runs',
    };
    expect(await tell(t.db, event)).toBe(1);
    await t.owner(
      `UPDATE notification SET created_at = now() - interval '60 days', read_at = now() - interval '59 days' WHERE subject_id = $1`,
      [subjectId],
    );
    const entriesBefore = await pruneEntries();

    const report = await pruneNotifications(t.db, { actor: systemActor, policy });

    expect(report).toEqual({ batches: 1, read: 4, unread: 1, emails: 1 });
    expect(await remaining([...pruned, ...kept])).toEqual([...kept].sort());
    expect(await emailsOf(pruned)).toBe(0);
    expect(await emailsOf(kept)).toBe(1);
    expect(await t.db.notification.count({ where: { subjectId } })).toBe(0);
    const entry = await t.db.auditEntry.findFirstOrThrow({
      where: { action: 'retention.prune', subjectId: 'notifications' },
      orderBy: { id: 'desc' },
    });
    expect(entry).toMatchObject({ chain: 'retention', actorId: 'test' });
    expect(entry.detail).toMatchObject({ read: 4, unread: 1, emails: 1, readDays: 30, allDays: 180 });
    expect(await pruneEntries()).toBe(entriesBefore + 1);
    expect((await verifyAuditTrail(t.db)).ok).toBe(true);

    // The event row stays: the same event told again (a hook that runs twice) tells nobody.
    expect(await tell(t.db, event)).toBe(0);
    expect(await t.db.notification.count({ where: { subjectId } })).toBe(0);
    // A second pass finds nothing and writes nothing.
    expect(await pruneNotifications(t.db, { actor: systemActor, policy })).toEqual({
      batches: 0,
      read: 0,
      unread: 0,
      emails: 0,
    });
    expect(await pruneEntries()).toBe(entriesBefore + 1);
  });

  it('prunes batch by batch, one audit entry each', async () => {
    const dan = await makePerson(t.db, 'support');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await aged(dan.id, 45, true));
    const entriesBefore = await pruneEntries();
    const seen: number[] = [];
    const report = await pruneNotifications(t.db, {
      actor: systemActor,
      policy: { ...policy, batchRows: 2 },
      onBatch: (r) => seen.push(r.read),
    });
    expect(report).toMatchObject({ batches: 3, read: 5, unread: 0 });
    expect(seen).toEqual([2, 4, 5]);
    expect(await remaining(ids)).toEqual([]);
    expect(await pruneEntries()).toBe(entriesBefore + 3);
  });

  it('npm run prune prunes notifications with the windows of the environment', async () => {
    // Other tests' rows would fall in these shorter windows too: counts below are this test's own.
    await t.owner(`DELETE FROM notification_email`);
    await t.owner(`DELETE FROM notification`);
    const erin = await makePerson(t.db, 'auditor');
    const old = await aged(erin.id, 12, true);
    const young = await aged(erin.id, 8, true);
    const unread = await aged(erin.id, 12, false);
    const result = await runScript(
      'scripts/prune.ts',
      scriptEnv({
        DATABASE_URL: t.appUrl,
        NOTIFY_RETENTION_READ_DAYS: '10',
        NOTIFY_RETENTION_DAYS: '20',
        NODE_ENV: 'test',
      }),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/read notifications older than 10 days, any older than 20 days/);
    expect(result.stdout).toMatch(/done: 1 notifications in 1 batches \(1 read, 0 unread, 0 outbox rows\)/);
    expect(await remaining([old, young, unread])).toEqual([young, unread].sort());
    expect(await t.db.auditEntry.count({ where: { subjectId: 'notifications', actorId: 'prune-cli' } })).toBe(1);
  });

  it("the leader's scheduled pass prunes notifications too; contradictory windows refuse to start", async () => {
    const fay = await makePerson(t.db, 'operator');
    const old = await aged(fay.id, 50, true);
    const leader = startRetentionSchedule({
      db: t.db,
      isLeader: () => true,
      intervalMs: 20,
      policy: { windowDays: 30, batchRuns: 100 },
      notificationPolicy: policy,
      log: () => undefined,
    });
    await expect.poll(async () => (await remaining([old])).length, { timeout: 60_000 }).toBe(0);
    await leader.stop();
    expect(
      await t.db.auditEntry.count({ where: { subjectId: 'notifications', actorId: 'retention', actorKind: 'policy' } }),
    ).toBeGreaterThanOrEqual(1);

    const saved = { read: process.env.NOTIFY_RETENTION_READ_DAYS, all: process.env.NOTIFY_RETENTION_DAYS };
    process.env.NOTIFY_RETENTION_READ_DAYS = '30';
    process.env.NOTIFY_RETENTION_DAYS = '7';
    resetEnvCache();
    try {
      expect(() => notificationRetentionFromEnv()).toThrow(
        /NOTIFY_RETENTION_DAYS \(7\) must be at least NOTIFY_RETENTION_READ_DAYS \(30\)/,
      );
      expect(() =>
        startRetentionSchedule({ db: t.db, isLeader: () => true, intervalMs: 20, log: () => undefined }),
      ).toThrow(/NOTIFY_RETENTION_DAYS/);
    } finally {
      for (const [name, value] of [
        ['NOTIFY_RETENTION_READ_DAYS', saved.read],
        ['NOTIFY_RETENTION_DAYS', saved.all],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      resetEnvCache();
    }
  });
});
