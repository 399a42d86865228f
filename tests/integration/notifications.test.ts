// Notifications: who is told when a four-eyes request waits, is decided or expires;
// preferences per person and kind, audited; the inbox is each person's own.
import { describe, expect, it } from 'vitest';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { resetEnvCache } from '@/lib/env.ts';
import { LedgerError } from '@/lib/ledger/index.ts';
import { inbox, unreadCount } from '@/lib/notifications/inbox.ts';
import { markAllRead, markRead } from '@/lib/notifications/read-marks.ts';
import { preferencesOf, setPreferences } from '@/lib/notifications/preferences.ts';
import { sweepExpiredApprovals } from '@/lib/notifications/schedule.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { doneKeys, makePerson, toldAbout } from './notifications-fixtures.ts';

process.env.NOTIFY_EMAIL_PROVIDER = 'notify';
resetEnvCache();
const t = await createTestDatabase({ poolSize: 6 });

async function bumpRequest(requester: Parameters<typeof requestBump>[0]['actor']) {
  const r = await requestBump({ db: t.db, actor: requester }, { keys: await doneKeys(t.db, 2), reason: 'resend' });
  if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
  return r;
}

describe('notifications', () => {
  it('a waiting bump request tells every eligible approver (not the requester, not other roles, not the disabled), by the channel each chose', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const carol = await makePerson(t.db, 'operator', { prefs: { 'approval.waiting': 'inbox' } });
    const frank = await makePerson(t.db, 'operator', { prefs: { 'approval.waiting': 'off' } });
    const erin = await makePerson(t.db, 'operator', { disabled: true });
    const dan = await makePerson(t.db, 'support');
    const admin = await makePerson(t.db, 'admin');
    const r = await bumpRequest(alice);
    const told = await toldAbout(t.db, r.requestId, 'approval.waiting');
    expect(told).toContain(bob.id);
    expect(told).toContain(carol.id);
    for (const nobody of [alice, frank, erin, dan, admin]) expect(told).not.toContain(nobody.id);
    const emails = await t.db.notificationEmail.findMany({
      where: {
        notificationId: {
          in: (await t.db.notification.findMany({ where: { subjectId: r.requestId } })).map((n) => n.id),
        },
      },
    });
    expect(emails.map((e) => e.toAddress)).toContain(bob.label);
    expect(emails.map((e) => e.toAddress)).not.toContain(carol.label);
    const mine = await inbox(t.db, bob.id);
    expect(mine.items[0]).toMatchObject({
      kind: 'approval.waiting',
      link: `/approvals#approval-${r.requestId}`,
      readAt: null,
    });
    expect(mine.items[0]!.title).toMatch(/Epoch bump of 2 keys waits for your approval/);
  });

  it('Z1: only approvers whose grants cover the workflow of the request are told', async () => {
    const alice = await makePerson(t.db, 'operator');
    const keys = await doneKeys(t.db, 1);
    const head = await t.db.effectKey.findUniqueOrThrow({ where: { key: keys[0]! }, select: { runId: true } });
    const { workflow } = await t.db.run.findUniqueOrThrow({ where: { id: head.runId }, select: { workflow: true } });
    // Auditors everywhere, each an operator on one workflow only.
    const here = await makePerson(t.db, 'auditor');
    const elsewhere = await makePerson(t.db, 'auditor');
    await t.db.roleGrant.create({ data: { userId: here.id, role: 'operator', workflow } });
    await t.db.roleGrant.create({ data: { userId: elsewhere.id, role: 'operator', workflow: `${workflow}-other` } });
    const r = await requestBump({ db: t.db, actor: alice }, { keys, reason: 'resend' });
    if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
    const told = await toldAbout(t.db, r.requestId, 'approval.waiting');
    expect(told).toContain(here.id);
    expect(told).not.toContain(elsewhere.id);
  });

  it('the requester is told when the request is approved, rejected or expires; the expiry sweep tells once', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const approved = await bumpRequest(alice);
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: approved.requestId, setHash: approved.setHash, decision: 'approve' },
    );
    expect(await toldAbout(t.db, approved.requestId, 'approval.approved')).toEqual([alice.id]);

    const rejected = await bumpRequest(alice);
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: rejected.requestId, setHash: rejected.setHash, decision: 'reject', reason: 'wrong set' },
    );
    expect(await toldAbout(t.db, rejected.requestId, 'approval.rejected')).toEqual([alice.id]);
    const body = (await inbox(t.db, alice.id)).items.find((i) => i.kind === 'approval.rejected')!.body;
    expect(body).toContain(`Rejected by ${bob.label}`);

    const expiring = await bumpRequest(alice);
    expect(await toldAbout(t.db, expiring.requestId, 'approval.expired')).toEqual([]);
    await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expiring.requestId,
    ]);
    const [first, second] = await Promise.all([sweepExpiredApprovals(t.db), sweepExpiredApprovals(t.db)]);
    expect(first! + second!).toBeGreaterThanOrEqual(1);
    expect(await toldAbout(t.db, expiring.requestId, 'approval.expired')).toEqual([alice.id]);
    expect(await sweepExpiredApprovals(t.db)).toBe(0);
    // Decided requests are not announced as expired when their time passes.
    await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      approved.requestId,
    ]);
    await sweepExpiredApprovals(t.db);
    expect(await toldAbout(t.db, approved.requestId, 'approval.expired')).toEqual([]);
  });

  it("Z1: a requester who no longer sees the request's workflow is not told how it ended, nor by whom", async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const r = await bumpRequest(alice);
    // Alice moved to another team: operator on another workflow only.
    await t.db.roleGrant.deleteMany({ where: { userId: alice.id } });
    await t.db.roleGrant.create({ data: { userId: alice.id, role: 'operator', workflow: `elsewhere-${alice.id}` } });
    await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'reject', reason: 'wrong set' },
    );
    expect(await toldAbout(t.db, r.requestId, 'approval.rejected')).toEqual([]);
  });

  it('A1: a preference change is audited in the same transaction; bad input is refused naming the field and changes nothing', async () => {
    const alice = await makePerson(t.db, 'operator');
    const ctx = { db: t.db, actor: alice };
    expect((await preferencesOf(t.db, alice.id))['approval.approved']).toBe('email');
    const after = await setPreferences(ctx, { preferences: { 'approval.approved': 'off', 'replay.failed': 'inbox' } });
    expect(after).toMatchObject({ 'approval.approved': 'off', 'replay.failed': 'inbox', 'approval.waiting': 'email' });
    const audit = await t.owner<{ detail: Record<string, unknown> }>(
      `SELECT detail FROM audit_entry WHERE action = 'notification.preferences' AND subject_id = $1`,
      [alice.id],
    );
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]!.detail).toEqual({
      changed: { 'approval.approved': { from: 'email', to: 'off' }, 'replay.failed': { from: 'email', to: 'inbox' } },
    });
    for (const bad of [
      { preferences: { 'approval.approved': 'sms' } },
      { preferences: { 'no.such.kind': 'off' } },
      { preferences: {} },
      { preferences: { 'approval.approved': 'email' }, extra: 1 },
    ]) {
      const error = await setPreferences(ctx, bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).code).toBe('validation');
      expect((error as LedgerError).message).toMatch(/preferences|extra/);
    }
    expect((await preferencesOf(t.db, alice.id))['approval.approved']).toBe('off');
    // "off" is respected: an approval of alice's request tells her nothing.
    const bob = await makePerson(t.db, 'operator');
    const r = await bumpRequest(alice);
    await decideBump({ db: t.db, actor: bob }, { requestId: r.requestId, setHash: r.setHash, decision: 'approve' });
    expect(await toldAbout(t.db, r.requestId, 'approval.approved')).toEqual([]);
  });

  it("the inbox and its unread count are the person's own; mark read and mark all read", async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    await bumpRequest(alice);
    await bumpRequest(alice);
    expect(await unreadCount(t.db, bob.id)).toBe(2);
    const [first] = (await inbox(t.db, bob.id)).items;
    expect(await markRead({ db: t.db, actor: alice }, { notificationId: first!.id })).toEqual({ marked: 0 });
    expect(await unreadCount(t.db, bob.id)).toBe(2);
    expect(await markRead({ db: t.db, actor: bob }, { notificationId: first!.id })).toEqual({ marked: 1 });
    expect(await unreadCount(t.db, bob.id)).toBe(1);
    await expect(markRead({ db: t.db, actor: bob }, { notificationId: 'nope' })).rejects.toThrow(/notificationId/);
    expect(await markAllRead({ db: t.db, actor: bob }, {})).toEqual({ marked: 1 });
    expect(await unreadCount(t.db, bob.id)).toBe(0);
  });
});
