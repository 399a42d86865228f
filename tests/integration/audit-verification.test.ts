// A2 in the background: the leader's verification job extends the verified part of the trail from
// where the last pass stopped (lib/audit/verification.ts), finds tampering after that point, and the
// audit page's read model reports the stored result with its age instead of re-verifying.
import { describe, expect, it } from 'vitest';
import { runAuditVerification } from '@/lib/audit/verification.ts';
import { EVERY_WORKFLOW, type WorkflowScope } from '@/lib/auth/grants.ts';
import { chainVerification } from '@/lib/read-models/audit-chain.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, suffix } from '../helpers/factories.ts';

async function maxEntryId(t: TestDatabase): Promise<string> {
  const r = await t.owner<{ max: string }>('SELECT max(id)::text AS max FROM audit_entry');
  return r.rows[0]!.max;
}

async function tamper(t: TestDatabase, sql: string, params: unknown[]): Promise<void> {
  await t.owner('ALTER TABLE audit_entry DISABLE TRIGGER USER');
  try {
    await t.owner(sql, params);
  } finally {
    await t.owner('ALTER TABLE audit_entry ENABLE TRIGGER USER');
  }
}

describe('A2: background verification of the audit trail', () => {
  it('A2: the first pass is full; later passes check only what was appended since and move the verified id forward', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    expect(await chainVerification(t.db, EVERY_WORKFLOW)).toMatchObject({ state: 'unverified', ageSeconds: null });
    for (let i = 0; i < 4; i++) await makeEffect(t.db, 'done');
    const first = await runAuditVerification(t.db);
    const total = Number((await t.owner<{ n: string }>('SELECT count(*) AS n FROM audit_entry')).rows[0]!.n);
    expect(first).toMatchObject({ kind: 'full', entries: total, stored: { state: 'ok', upToId: await maxEntryId(t) } });

    const before = Number(await maxEntryId(t));
    await makeEffect(t.db, 'revoked');
    const added = Number(
      (await t.owner<{ n: string }>('SELECT count(*) AS n FROM audit_entry WHERE id > $1', [before])).rows[0]!.n,
    );
    expect(added).toBeGreaterThan(0);
    // No re-check margin: entries appended before the last pass began are not looked at again.
    const second = await runAuditVerification(t.db, { recheckMarginMs: 0 });
    expect(second).toMatchObject({
      kind: 'incremental',
      entries: added,
      stored: { state: 'ok', upToId: await maxEntryId(t) },
    });

    const shown = await chainVerification(t.db, EVERY_WORKFLOW, new Date(Date.now() + 40_000));
    expect(shown).toMatchObject({ state: 'ok', upToId: await maxEntryId(t) });
    expect(shown.ageSeconds).toBeGreaterThanOrEqual(39);
    expect(shown.stale).toBe(false);
    expect((await chainVerification(t.db, EVERY_WORKFLOW, new Date(Date.now() + 3_600_000))).stale).toBe(true);
  });

  it('A2: an entry altered after the verified point is named by the next incremental pass, and the verified id stays', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    await makeEffect(t.db, 'done');
    const verified = await runAuditVerification(t.db);
    expect(verified.stored.state).toBe('ok');
    const upTo = await maxEntryId(t);

    const e = await makeEffect(t.db, 'revoked');
    const target = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${e.key}`, action: 'effect.revoke' },
    });
    expect(target.id).toBeGreaterThan(BigInt(upTo));
    await tamper(t, `UPDATE audit_entry SET reason = 'nothing to see here' WHERE id = $1`, [target.id]);

    const pass = await runAuditVerification(t.db);
    expect(pass.kind).toBe('incremental');
    expect(pass.stored).toMatchObject({
      state: 'broken',
      upToId: upTo,
      entryId: String(target.id),
      chain: target.chain,
      seq: target.seq,
      problem: 'content does not match its hash',
    });
    // The next pass looks at the same entries again and still finds it.
    expect((await runAuditVerification(t.db)).stored).toMatchObject({ state: 'broken', entryId: String(target.id) });
    expect(await chainVerification(t.db, EVERY_WORKFLOW)).toMatchObject({
      state: 'broken',
      at: { entryId: String(target.id) },
    });
  });

  it('A2: a deleted last entry of a chain is found by an incremental pass; a change before the verified point waits for the full pass', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    const a = await makeEffect(t.db, 'done');
    const b = await makeEffect(t.db, 'done');
    expect((await runAuditVerification(t.db)).stored.state).toBe('ok');

    // Changed before the verified point: an incremental pass does not re-read it; the full one does.
    const old = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${a.key}` },
      orderBy: { seq: 'asc' },
    });
    await tamper(t, `UPDATE audit_entry SET actor_label = 'someone else' WHERE id = $1`, [old.id]);
    expect((await runAuditVerification(t.db, { recheckMarginMs: 0 })).stored.state).toBe('ok');
    expect((await runAuditVerification(t.db, { full: true })).stored).toMatchObject({
      state: 'broken',
      entryId: String(old.id),
      problem: 'content does not match its hash',
    });
    await tamper(t, `UPDATE audit_entry SET actor_label = $2 WHERE id = $1`, [old.id, old.actorLabel]);
    expect((await runAuditVerification(t.db, { full: true })).stored.state).toBe('ok');

    // The last entry of b's chain removed: no new entry points at the gap, the head check finds it.
    const last = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${b.key}` },
      orderBy: { seq: 'desc' },
    });
    expect(last.seq).toBeGreaterThan(1);
    await tamper(t, `DELETE FROM audit_entry WHERE id = $1`, [last.id]);
    const pass = await runAuditVerification(t.db, { recheckMarginMs: 0 });
    expect(pass).toMatchObject({
      kind: 'incremental',
      entries: 0,
      stored: { state: 'broken', chain: last.chain, seq: last.seq, problem: 'entries missing after this one' },
    });
  });

  it('A2: a break a full pass found stays reported by the passes after it, until a full pass finds the trail repaired', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    const a = await makeEffect(t.db, 'done');
    await makeEffect(t.db, 'done');
    expect((await runAuditVerification(t.db)).stored.state).toBe('ok');
    const old = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${a.key}` },
      orderBy: { seq: 'asc' },
    });
    await tamper(t, `UPDATE audit_entry SET reason = 'rewritten' WHERE id = $1`, [old.id]);
    const broken = { state: 'broken', entryId: String(old.id), problem: 'content does not match its hash' };
    expect((await runAuditVerification(t.db, { full: true })).stored).toMatchObject(broken);

    // New entries arrive above the verified id; the passes after the break must still report it,
    // although the broken entry lies below everything an incremental pass looks at.
    await makeEffect(t.db, 'revoked');
    const next = await runAuditVerification(t.db, { recheckMarginMs: 0 });
    expect(next).toMatchObject({ kind: 'full', stored: broken });
    expect((await runAuditVerification(t.db, { recheckMarginMs: 0 })).stored).toMatchObject(broken);
    expect(await chainVerification(t.db, EVERY_WORKFLOW)).toMatchObject({
      state: 'broken',
      at: { entryId: String(old.id) },
    });

    // Repaired: the next (full) pass clears it and moves the verified id to the newest entry; then
    // passes are incremental again.
    await tamper(t, `UPDATE audit_entry SET reason = $2 WHERE id = $1`, [old.id, old.reason]);
    expect(await runAuditVerification(t.db, { recheckMarginMs: 0 })).toMatchObject({
      kind: 'full',
      stored: { state: 'ok', upToId: await maxEntryId(t) },
    });
    expect((await runAuditVerification(t.db, { recheckMarginMs: 0 })).kind).toBe('incremental');
  });

  it('Z1: a viewer scoped to some workflows sees the status and age, not the verified entry id (a count of the whole trail), and where a break is only when the broken entry is theirs', async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    const mine = `mine_${suffix()}`;
    const theirs = `theirs_${suffix()}`;
    const scoped: WorkflowScope = { all: false, workflows: [mine] };
    const a = await makeEffect(t.db, 'done', { runId: (await makeRun(t.db, mine)).runId });
    const b = await makeEffect(t.db, 'done', { runId: (await makeRun(t.db, theirs)).runId });
    expect((await runAuditVerification(t.db)).stored.state).toBe('ok');

    const ok = await chainVerification(t.db, scoped);
    expect(ok).toMatchObject({ state: 'ok', upToId: null, stale: false });
    expect(ok.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(Object.keys(ok).sort()).toEqual(['ageSeconds', 'checkedAt', 'stale', 'state', 'upToId']);

    // A break in the other workflow's entry: the scoped viewer learns that the trail is broken and when
    // that was found, not where; the all-workflows viewer sees the entry.
    const other = await t.db.auditEntry.findFirstOrThrow({ where: { chain: `effect:${b.key}` } });
    await tamper(t, `UPDATE audit_entry SET reason = 'rewritten' WHERE id = $1`, [other.id]);
    expect((await runAuditVerification(t.db, { full: true })).stored.state).toBe('broken');
    const hidden = await chainVerification(t.db, scoped);
    expect(hidden).toMatchObject({ state: 'broken', at: null });
    expect(JSON.stringify(hidden)).not.toContain(b.key);
    expect(await chainVerification(t.db, EVERY_WORKFLOW)).toMatchObject({
      state: 'broken',
      at: { entryId: String(other.id), chain: `effect:${b.key}` },
    });
    await tamper(t, `UPDATE audit_entry SET reason = $2 WHERE id = $1`, [other.id, other.reason]);

    // A break in the viewer's own entry is located for them.
    const own = await t.db.auditEntry.findFirstOrThrow({ where: { chain: `effect:${a.key}` } });
    await tamper(t, `UPDATE audit_entry SET reason = 'rewritten' WHERE id = $1`, [own.id]);
    expect((await runAuditVerification(t.db, { full: true })).stored.state).toBe('broken');
    expect(await chainVerification(t.db, scoped)).toMatchObject({
      state: 'broken',
      at: { entryId: String(own.id), chain: `effect:${a.key}`, problem: 'content does not match its hash' },
    });
  });
});
