// Four-eyes epoch bumps (Z3, E2): the requester cannot approve; the approval is bound to the hash of
// the exact set and expires; a key that moved in between is reported, not bumped; tools with
// four-eyes off are bumped directly.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, suffix, userActor } from '../helpers/factories.ts';
import { decideBump } from '@/lib/approvals/decide-bump.ts';
import { requestBump } from '@/lib/approvals/request-bump.ts';
import { claimEffect, completeEffect, revokeEffect, type Actor } from '@/lib/ledger/index.ts';

const t = await createTestDatabase({ poolSize: 6 });
const runtime: Actor = { kind: 'runtime', id: 'rt', label: 'rt', workflows: ['*'] };
const alice = userActor('operator');
const bob = userActor('operator');

async function doneKeys(n: number, fourEyes = true) {
  const tool = await makeTool(t.db);
  if (!fourEyes) await t.db.toolDefinition.update({ where: { name: tool.name }, data: { fourEyesBump: false } });
  const run = await makeRun(t.db);
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = await claimEffect(
      { db: t.db, actor: runtime },
      {
        runId: run.runId,
        tool: tool.name,
        action: 'receipt',
        recordId: `r${i}`,
        target: `z${i}-${suffix()}@example.com`,
      },
    );
    if (!c.claimed) throw new Error('lost');
    await completeEffect({ db: t.db, actor: runtime }, { key: c.key, receipt: `m${i}` });
    keys.push(c.key);
  }
  return keys;
}

const epochOf = async (key: string) => (await t.db.effectKey.findUniqueOrThrow({ where: { key } })).currentEpoch;

describe('four-eyes epoch bumps', () => {
  it('Z3: the requester cannot approve their own request (refusal audited); another operator can, and the bumps run', async () => {
    const keys = await doneKeys(3);
    const r = await requestBump({ db: t.db, actor: alice }, { keys, reason: 'resend after template fix' });
    expect(r).toMatchObject({ mode: 'requested', count: 3 });
    if (r.mode !== 'requested') return;
    expect(await epochOf(keys[0]!)).toBe(1);
    await expect(
      decideBump({ db: t.db, actor: alice }, { requestId: r.requestId, setHash: r.setHash, decision: 'approve' }),
    ).rejects.toThrow('cannot approve their own request');
    const refused = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'approval.approve' AND outcome = 'refused' AND actor_id = $1`,
      [alice.id],
    );
    expect(refused.rows[0]?.n).toBe(1);
    const done = await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'approve' },
    );
    expect(done).toMatchObject({ bumped: 3, failed: [] });
    for (const k of keys) expect(await epochOf(k)).toBe(2);
    await expect(
      decideBump({ db: t.db, actor: bob }, { requestId: r.requestId, setHash: r.setHash, decision: 'approve' }),
    ).rejects.toThrow('already approved');
  });

  it('Z3: an approval must carry the hash of the exact set, and an expired request cannot be approved', async () => {
    const keys = await doneKeys(2);
    const r = await requestBump({ db: t.db, actor: alice }, { keys, reason: 'x' });
    if (r.mode !== 'requested') throw new Error('expected a request');
    await expect(
      decideBump({ db: t.db, actor: bob }, { requestId: r.requestId, setHash: 'f'.repeat(64), decision: 'approve' }),
    ).rejects.toThrow('the set changed');
    await t.owner(`UPDATE approval_request SET expires_at = now() - interval '1 second' WHERE id = $1`, [r.requestId]);
    await expect(
      decideBump({ db: t.db, actor: bob }, { requestId: r.requestId, setHash: r.setHash, decision: 'approve' }),
    ).rejects.toThrow('expired');
    for (const k of keys) expect(await epochOf(k)).toBe(1);
  });

  it('E2/F4: a key that moved between request and approval is reported, not bumped', async () => {
    const keys = await doneKeys(2);
    const r = await requestBump({ db: t.db, actor: alice }, { keys, reason: 'x' });
    if (r.mode !== 'requested') throw new Error('expected a request');
    // Meanwhile another approved request bumps the first key, so the set's epoch for it is stale.
    const other = await requestBump({ db: t.db, actor: bob }, { keys: [keys[0]!], reason: 'y' });
    if (other.mode !== 'requested') throw new Error('expected a request');
    await decideBump(
      { db: t.db, actor: alice },
      { requestId: other.requestId, setHash: other.setHash, decision: 'approve' },
    );
    const result = await decideBump(
      { db: t.db, actor: bob },
      { requestId: r.requestId, setHash: r.setHash, decision: 'approve' },
    );
    expect(result.bumped).toBe(1);
    expect(result.failed).toHaveLength(1);
    expect(result.failed[0]!.error).toContain('stale epoch');
    expect(await epochOf(keys[0]!)).toBe(2);
  });

  it('E2: pending and unknown keys are not offered for a bump; a tool with four-eyes off is bumped directly', async () => {
    const direct = await doneKeys(1, false);
    await revokeEffect({ db: t.db, actor: alice }, { key: direct[0]!, reason: 'wrong list' });
    const r = await requestBump(
      { db: t.db, actor: alice },
      { keys: direct, reason: 'resend to the corrected address' },
    );
    expect(r).toMatchObject({ mode: 'executed', bumped: 1 });
    expect(await epochOf(direct[0]!)).toBe(2);
    // Now pending at epoch 2: a bump is refused, naming the reason.
    await expect(requestBump({ db: t.db, actor: alice }, { keys: direct, reason: 'again' })).rejects.toThrow(
      'pending blocks a bump',
    );
  });

  it('Z1: a support user cannot request a bump (refused and audited)', async () => {
    const keys = await doneKeys(1);
    const support = userActor('support');
    await expect(requestBump({ db: t.db, actor: support }, { keys, reason: 'x' })).rejects.toThrow();
    const refused = await t.owner(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'approval.request' AND outcome = 'refused' AND actor_id = $1`,
      [support.id],
    );
    expect(refused.rows[0]?.n).toBe(1);
  });
});
