// E2/Z3 under a crash: an approved four-eyes bump commits its approval before its bumps run, each key
// in its own transaction. A request approved but never executed (the process died in between) is
// resumed by the worker's leader as its approver, once; a request whose bumps ran is marked executed.
import { describe, expect, it } from 'vitest';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { resumeApprovedBumps } from '@/lib/approvals/resume-bumps.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { doneKeys, makePerson } from './notifications-fixtures.ts';

const t = await createTestDatabase({ poolSize: 4 });

async function epochsOf(keys: string[]) {
  const rows = await t.db.effectKey.findMany({ where: { key: { in: keys } }, select: { currentEpoch: true } });
  return rows.map((r) => r.currentEpoch);
}

describe('approved bump requests survive a crash between approval and bumps', () => {
  it('E2 Z3: a request approved but never executed is resumed once, as its approver; one that ran is marked executed', async () => {
    const alice = await makePerson(t.db, 'operator');
    const bob = await makePerson(t.db, 'operator');
    const keys = await doneKeys(t.db, 3);
    const r = await requestBump({ db: t.db, actor: alice }, { keys, reason: 'template fixed' });
    if (r.mode !== 'requested') throw new Error('expected a four-eyes request');
    // The approval committed, then the process died: no bump ran.
    await t.owner(
      `UPDATE approval_request SET status = 'approved', decided_by_id = $2, decided_at = now() - interval '1 hour'
        WHERE id = $1`,
      [r.requestId, bob.id],
    );
    expect(await epochsOf(keys)).toEqual([1, 1, 1]);
    expect(await resumeApprovedBumps(t.db)).toBe(1);
    expect(await epochsOf(keys)).toEqual([2, 2, 2]);
    const bumps = await t.owner<{ actor_id: string; reason: string }>(
      `SELECT actor_id, reason FROM audit_entry WHERE action = 'effect.bump' AND subject_id = ANY($1)`,
      [keys],
    );
    expect(bumps.rows).toHaveLength(3);
    expect(bumps.rows.every((b) => b.actor_id === bob.id && b.reason.includes('resumed'))).toBe(true);
    expect(await resumeApprovedBumps(t.db)).toBe(0);
    expect(await epochsOf(keys)).toEqual([2, 2, 2]);

    // Approved in the console: the bumps run and the request is marked, so no sweep runs it again.
    const more = await doneKeys(t.db, 2);
    const q = await requestBump({ db: t.db, actor: alice }, { keys: more, reason: 'again' });
    if (q.mode !== 'requested') throw new Error('expected a four-eyes request');
    await decideBump({ db: t.db, actor: bob }, { requestId: q.requestId, setHash: q.setHash, decision: 'approve' });
    const row = await t.db.approvalRequest.findUniqueOrThrow({ where: { id: q.requestId } });
    expect(row.executedAt).not.toBeNull();
    await t.owner(`UPDATE approval_request SET decided_at = now() - interval '1 hour' WHERE id = $1`, [q.requestId]);
    expect(await resumeApprovedBumps(t.db)).toBe(0);
  });
});
