// People for the notification tests: real user rows (the fan-out reads roles, the disabled flag and
// preferences from the database), plus done keys an epoch bump can be asked for.
import { randomUUID } from 'node:crypto';
import type { Db } from '@/lib/db/client.ts';
import { claimEffect, completeEffect, type Actor } from '@/lib/ledger/index.ts';
import type { Channel, NotificationKind } from '@/lib/notifications/kinds.ts';
import { makeRun, makeTool, suffix } from '../helpers/factories.ts';

type Role = 'admin' | 'operator' | 'support' | 'auditor';

export async function makePerson(
  db: Db,
  role: Role,
  options: { disabled?: boolean; prefs?: Partial<Record<NotificationKind, Channel>> } = {},
): Promise<Actor & { kind: 'user' }> {
  const email = `${role}-${suffix()}@example.com`;
  const user = await db.user.create({
    data: { id: randomUUID(), email, name: email, role, disabled: options.disabled ?? false },
  });
  for (const [kind, channel] of Object.entries(options.prefs ?? {}))
    await db.notificationPreference.create({ data: { userId: user.id, kind, channel: channel! } });
  return { kind: 'user', id: user.id, label: email, role };
}

export async function doneKeys(db: Db, n: number): Promise<string[]> {
  const runtime: Actor = { kind: 'runtime', id: 'rt', label: 'rt', workflows: ['*'] };
  const tool = await makeTool(db);
  const run = await makeRun(db);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = await claimEffect(
      { db, actor: runtime },
      {
        runId: run.runId,
        tool: tool.name,
        action: 'receipt',
        recordId: `r${i}`,
        target: `n${i}-${suffix()}@example.com`,
      },
    );
    if (!c.claimed) throw new Error('lost');
    await completeEffect({ db, actor: runtime }, { key: c.key, receipt: `m${i}` });
    keys.push(c.key);
  }
  return keys;
}

export async function toldAbout(db: Db, subjectId: string, kind: NotificationKind): Promise<string[]> {
  const rows = await db.notification.findMany({ where: { subjectId, kind }, select: { userId: true } });
  return rows.map((r) => r.userId).sort();
}
