// S2 done needs a receipt, S5 revocation only by an explicit action, S6 stuck.
import { describe, expect, it } from 'vitest';
import {
  bumpEpoch,
  claimEffect,
  completeEffect,
  failEffect,
  LedgerError,
  markStuck,
  markUnknown,
  providerIdempotencyKey,
  resolveUnknown,
  revokeEffect,
  transitionEffect,
  type Actor,
} from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import {
  makeEffect,
  makeTool,
  reconcilerActor,
  runtimeActor,
  snapshot,
  userActor,
  executorActor,
  policyActor,
} from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 10 });

async function refusal(promise: Promise<unknown>): Promise<LedgerError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof LedgerError)) throw new Error(`expected a LedgerError, got ${String(error)}`);
  return error;
}

async function sqlError(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!error) throw new Error('expected the database to refuse');
  return error as { code?: string; message: string };
}

describe('S2: done only with a receipt that can be looked up later', () => {
  it('S2: completeEffect without a receipt, or with a blank one, is refused and writes nothing', async () => {
    const e = await makeEffect(t.db, 'pending');
    const before = await snapshot(t.db);
    for (const input of [
      { key: e.key },
      { key: e.key, receipt: '' },
      { key: e.key, receipt: '   ' },
      { key: e.key, receipt: null },
    ]) {
      const error = await refusal(completeEffect({ db: t.db, actor: e.runtime }, input));
      expect(error.code).toBe('validation');
      expect(error.details.field).toBe('receipt');
    }
    // The generic path refuses too, for every party that may complete.
    for (const actor of [e.runtime, executorActor(), reconcilerActor()]) {
      const error = await refusal(
        transitionEffect({ db: t.db, actor }, { key: e.key, to: 'done', action: 'effect.complete', receipt: ' ' }),
      );
      expect(error.details.field).toBe('receipt');
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S2: the database trigger refuses done without a receipt, for the owner and for the app role', async () => {
    const e = await makeEffect(t.db, 'pending');
    const before = await snapshot(t.db);
    for (const sql of [
      `UPDATE effect SET state = 'done' WHERE key = $1`,
      `UPDATE effect SET state = 'done', receipt = '' WHERE key = $1`,
    ]) {
      const asOwner = await sqlError(t.owner(sql, [e.key]));
      expect(asOwner.code).toBe('EL002');
      expect(asOwner.message).toMatch(/without a receipt/);
    }
    const asApp = await sqlError(t.db.$executeRawUnsafe(`UPDATE effect SET state = 'done' WHERE key = $1`, e.key));
    expect(asApp.message).toMatch(/permission denied for table effect/);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S2: with a receipt, done stores it on the effect and in the audit entry', async () => {
    const e = await makeEffect(t.db, 'pending');
    const done = await completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, receipt: ' <msg-123@provider> ' });
    expect(done).toMatchObject({ from: 'pending', state: 'done', receipt: '<msg-123@provider>' });
    const row = await t.db.effect.findFirstOrThrow({ where: { key: e.key } });
    expect(row.receipt).toBe('<msg-123@provider>');
    const audit = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${e.key}`, action: 'effect.complete' },
    });
    expect(audit.detail).toMatchObject({ receipt: '<msg-123@provider>' });
  });
});

describe('S5: revoked only by an explicit action', () => {
  it('S5: an operator revokes with a reason from pending, done, unknown and stuck', async () => {
    for (const state of ['pending', 'done', 'unknown', 'stuck', 'awaiting'] as const) {
      const e = await makeEffect(t.db, state);
      const operator = userActor('operator');
      const result = await revokeEffect(
        { db: t.db, actor: operator, request: { ip: '203.0.113.7', userAgent: 'console', requestId: `req-${state}` } },
        { key: e.key, reason: '  customer withdrew consent  ' },
      );
      expect(result.state).toBe('revoked');
      const audit = await t.db.auditEntry.findFirstOrThrow({
        where: { chain: `effect:${e.key}`, action: 'effect.revoke' },
      });
      expect(audit).toMatchObject({
        actorId: operator.id,
        actorRole: 'operator',
        reason: 'customer withdrew consent',
        afterState: 'revoked',
        ip: '203.0.113.7',
        requestId: `req-${state}`,
      });
      // Revoked holds the key: nobody re-claims it without an epoch bump.
      expect(await claimEffect({ db: t.db, actor: e.runtime }, e.input)).toMatchObject({
        claimed: false,
        state: 'revoked',
      });
    }
  });

  it('S5: a human revocation without a reason is refused and writes nothing', async () => {
    const e = await makeEffect(t.db, 'done');
    const before = await snapshot(t.db);
    for (const reason of [undefined, '', '    ']) {
      const error = await refusal(revokeEffect({ db: t.db, actor: userActor('operator') }, { key: e.key, reason }));
      expect(error.code).toBe('validation');
      expect(error.details.field).toBe('reason');
      const generic = await refusal(
        transitionEffect(
          { db: t.db, actor: userActor('operator') },
          { key: e.key, to: 'revoked', action: 'effect.revoke', reason },
        ),
      );
      expect(generic.details.field).toBe('reason');
    }
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S5: a deletion through our own API revokes (the runtime records it)', async () => {
    const e = await makeEffect(t.db, 'done');
    const result = await revokeEffect(
      { db: t.db, actor: e.runtime },
      { key: e.key, reason: 'record deleted via DELETE /api/records/42' },
    );
    expect(result).toMatchObject({ from: 'done', state: 'revoked' });
    const audit = await t.db.auditEntry.findFirstOrThrow({
      where: { chain: `effect:${e.key}`, action: 'effect.revoke' },
    });
    expect(audit).toMatchObject({ actorKind: 'runtime', beforeState: 'done', afterState: 'revoked' });
  });

  it('S5: support, auditors, admins, the reconciler (absence), policies and the executor may not revoke: refused, audited, nothing changed', async () => {
    const e = await makeEffect(t.db, 'done');
    const parties: Actor[] = [
      userActor('support'),
      userActor('auditor'),
      userActor('admin'),
      reconcilerActor(),
      policyActor('cleanup'),
      executorActor(),
    ];
    for (const actor of parties) {
      const before = await snapshot(t.db);
      const refusedBefore = await t.db.auditEntry.count({ where: { chain: `refused:effect:${e.key}` } });
      const error = await refusal(
        revokeEffect({ db: t.db, actor }, { key: e.key, reason: 'looks deleted: lookup returned 404' }),
      );
      expect(error.code).toBe('forbidden');
      expect(await snapshot(t.db)).toEqual(before);
      expect(await t.db.auditEntry.count({ where: { chain: `refused:effect:${e.key}` } })).toBe(refusedBefore + 1);
      const entry = await t.db.auditEntry.findFirstOrThrow({
        where: { chain: `refused:effect:${e.key}` },
        orderBy: { seq: 'desc' },
      });
      expect(entry).toMatchObject({
        outcome: 'refused',
        actorId: actor.id,
        action: 'effect.revoke',
        afterState: 'revoked',
      });
    }
  });

  it('S5: an operator revokes a failed key (a known-bad address), and no claim takes it afterwards; a revoked key cannot be revoked again', async () => {
    const failed = await makeEffect(t.db, 'failed');
    const revoked = await revokeEffect(
      { db: t.db, actor: userActor('operator') },
      { key: failed.key, reason: 'mailbox unavailable: keep it out of replays' },
    );
    expect(revoked).toMatchObject({ from: 'failed', state: 'revoked' });
    const again = await claimEffect({ db: t.db, actor: failed.runtime }, failed.input);
    expect(again).toMatchObject({ claimed: false, state: 'revoked' });
    const e = await makeEffect(t.db, 'revoked');
    const before = await snapshot(t.db);
    const error = await refusal(
      revokeEffect({ db: t.db, actor: userActor('operator') }, { key: e.key, reason: 'tidy up' }),
    );
    expect(error.code).toBe('invalid_transition');
    expect(await snapshot(t.db)).toEqual(before);
  });
});

describe('S6: stuck', () => {
  it('S6: pending -> stuck needs the provider response as evidence; stuck holds the key and only revoke or bump leave it', async () => {
    const e = await makeEffect(t.db, 'pending');
    const noEvidence = await refusal(markStuck({ db: t.db, actor: e.runtime }, { key: e.key }));
    expect(noEvidence.details.field).toBe('evidence');
    const evidence = { status: 409, body: 'idempotency key already used by failed payment pi_123' };
    const stuck = await markStuck({ db: t.db, actor: e.runtime }, { key: e.key, evidence });
    expect(stuck).toMatchObject({ from: 'pending', state: 'stuck' });
    const transition = await t.db.effectTransition.findFirstOrThrow({ where: { key: e.key, toState: 'stuck' } });
    expect(transition.evidence).toEqual(evidence);
    // Not re-claimable, not completable, not resolvable by support.
    expect(await claimEffect({ db: t.db, actor: runtimeActor() }, e.input)).toMatchObject({
      claimed: false,
      state: 'stuck',
    });
    const before = await snapshot(t.db);
    expect((await refusal(completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, receipt: 'late' }))).code).toBe(
      'invalid_transition',
    );
    expect(
      (
        await refusal(
          resolveUnknown(
            { db: t.db, actor: userActor('support') },
            { key: e.key, outcome: 'not_sent', reason: 'try again' },
          ),
        )
      ).code,
    ).toBe('invalid_transition');
    expect(await snapshot(t.db)).toEqual(before);
    const revoked = await revokeEffect(
      { db: t.db, actor: userActor('operator') },
      { key: e.key, reason: 'payment will be redone by hand' },
    );
    expect(revoked).toMatchObject({ from: 'stuck', state: 'revoked' });
  });

  it('S6: only the runtime or the executor marks stuck', async () => {
    const e = await makeEffect(t.db, 'pending');
    for (const actor of [userActor('support'), userActor('operator'), reconcilerActor()]) {
      const error = await refusal(markStuck({ db: t.db, actor }, { key: e.key, evidence: { note: 'x' } }));
      expect(error.code).toBe('forbidden');
    }
    expect(
      await markStuck({ db: t.db, actor: executorActor() }, { key: e.key, evidence: { status: 410 } }),
    ).toMatchObject({ state: 'stuck' });
  });
});

describe('Z6 in the ledger core: a runtime acts only on effects of its own workflows', () => {
  it('S2/S5: a runtime scoped to another workflow cannot complete, fail, mark or revoke the effect: refused, audited, nothing changed', async () => {
    const e = await makeEffect(t.db, 'pending');
    const run = await t.db.run.findUniqueOrThrow({ where: { id: e.runId } });
    const stranger = runtimeActor(['some_other_workflow']);
    const before = await snapshot(t.db);
    const attempts = [
      () => completeEffect({ db: t.db, actor: stranger }, { key: e.key, receipt: 'forged' }),
      () => markStuck({ db: t.db, actor: stranger }, { key: e.key, evidence: { x: 1 } }),
      () => revokeEffect({ db: t.db, actor: stranger }, { key: e.key, reason: 'deleted' }),
      () =>
        transitionEffect({ db: t.db, actor: stranger }, { key: e.key, to: 'unknown', action: 'effect.mark_unknown' }),
    ];
    for (const attempt of attempts) {
      const error = await refusal(attempt());
      expect(error.code).toBe('forbidden');
      expect(error.message).toMatch(/not scoped/);
    }
    expect(await snapshot(t.db)).toEqual(before);
    expect(await t.db.auditEntry.count({ where: { chain: `refused:effect:${e.key}`, actorId: stranger.id } })).toBe(
      attempts.length,
    );
    // A runtime scoped to the run's workflow may.
    const own = runtimeActor([run.workflow]);
    expect(await completeEffect({ db: t.db, actor: own }, { key: e.key, receipt: 'msg-own' })).toMatchObject({
      state: 'done',
    });
  });
});

describe('S7 under concurrency: one transition wins, the others are refused', () => {
  it('S2/S3/S4: 20 concurrent reports of one pending effect (complete, fail, unknown, stuck), 30 trials: exactly one applies', async () => {
    const tool = (await makeTool(t.db)).name;
    const runId = (await makeEffect(t.db, 'pending')).runId;
    const problems: string[] = [];
    for (let trial = 0; trial < 30; trial++) {
      const e = await makeEffect(t.db, 'pending', { tool, runId });
      const ctx = { db: t.db, actor: e.runtime };
      const reports = Array.from({ length: 20 }, (_, i) =>
        i % 4 === 0
          ? completeEffect(ctx, { key: e.key, receipt: `msg-${i}` })
          : i % 4 === 1
            ? failEffect(ctx, { key: e.key, evidence: { i } })
            : i % 4 === 2
              ? markUnknown(ctx, { key: e.key })
              : markStuck(ctx, { key: e.key, evidence: { i } }),
      );
      const results = await Promise.allSettled(reports);
      const applied = results.filter((r) => r.status === 'fulfilled');
      const refusedCodes = results.flatMap((r) =>
        r.status === 'rejected' ? [(r.reason as LedgerError).code ?? String(r.reason)] : [],
      );
      if (applied.length !== 1) problems.push(`trial ${trial}: ${applied.length} applied`);
      if (refusedCodes.some((c) => c !== 'invalid_transition'))
        problems.push(`trial ${trial}: ${refusedCodes.join(',')}`);
      const row = await t.db.effect.findFirstOrThrow({ where: { key: e.key } });
      const winner = (applied[0] as PromiseFulfilledResult<{ state: string; receipt: string | null }> | undefined)
        ?.value;
      if (winner && (row.state !== winner.state || row.receipt !== winner.receipt))
        problems.push(`trial ${trial}: row ${row.state}/${row.receipt} vs winner ${winner.state}/${winner.receipt}`);
      const transitions = await t.db.effectTransition.count({ where: { key: e.key } });
      if (transitions !== 2) problems.push(`trial ${trial}: ${transitions} transition rows`);
      const refusedAudit = await t.db.auditEntry.count({ where: { chain: `refused:effect:${e.key}` } });
      if (refusedAudit !== 19) problems.push(`trial ${trial}: ${refusedAudit} refused audit entries`);
    }
    expect(problems.slice(0, 5)).toEqual([]);
  });

  it('R2: the provider idempotency key of each (key, epoch) is the same in the database and in lib/', async () => {
    const e = await makeEffect(t.db, 'done');
    await bumpEpoch({ db: t.db, actor: userActor('operator') }, { key: e.key, reason: 'resend' });
    const claim = await claimEffect({ db: t.db, actor: e.runtime }, e.input);
    expect(claim.claimed && claim.idempotencyKey).toBe(providerIdempotencyKey(e.key, 2));
    const rows = await t.db.effect.findMany({ where: { key: e.key }, orderBy: { epoch: 'asc' } });
    expect(rows.map((r) => r.idempotencyKey)).toEqual([
      providerIdempotencyKey(e.key, 1),
      providerIdempotencyKey(e.key, 2),
    ]);
  });
});

describe('S4: the reconciler completes with a receipt it found', () => {
  it('S4: a receipt found by the reconciler completes the pending claim', async () => {
    const e = await makeEffect(t.db, 'pending');
    expect(
      await completeEffect({ db: t.db, actor: reconcilerActor() }, { key: e.key, receipt: 'msg-found' }),
    ).toMatchObject({ state: 'done' });
  });

  it('S7: a refusal names its reason when the state alone does not explain it (awaiting its claim)', async () => {
    const e = await makeEffect(t.db, 'awaiting');
    const error = await refusal(completeEffect({ db: t.db, actor: e.runtime }, { key: e.key, receipt: 'x' }));
    expect(error.code).toBe('invalid_transition');
    expect(error.message).toMatch(/awaiting its claim/);
    const refused = await t.db.auditEntry.findFirstOrThrow({ where: { chain: `refused:effect:${e.key}` } });
    expect(refused.detail).toMatchObject({ why: expect.stringMatching(/awaiting its claim/) });
  });
});
