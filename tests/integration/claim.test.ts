import { describe, expect, it } from 'vitest';
import {
  claimEffect,
  completeEffect,
  failEffect,
  LedgerError,
  markUnknown,
  resolveUnknown,
  type ClaimEffectResult,
} from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import {
  makeEffect,
  makeRun,
  makeTool,
  runtimeActor,
  executorActor,
  reconcilerActor,
  policyActor,
  snapshot,
  userActor,
} from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 50 });

type Claim = Awaited<ReturnType<typeof claimEffect>>;

/** Runs `n` claims at once; every one must resolve (no exception); returns the results. */
async function race(n: number, claim: () => Promise<Claim>): Promise<Claim[]> {
  const results = await Promise.allSettled(Array.from({ length: n }, claim));
  expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
  return results.map((r) => (r as PromiseFulfilledResult<Claim>).value);
}

describe('claim', () => {
  it('S1: 50 concurrent claimers of one key, 200 trials: exactly one winner each, losers skip without error', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const actor = runtimeActor();
    const before = await snapshot(t.db);
    for (let trial = 0; trial < 200; trial++) {
      const input = {
        runId: run.runId,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: `customer-${trial}`,
        target: `user${trial}@example.com`,
      };
      const values = await race(50, () => claimEffect({ db: t.db, actor }, input));
      expect(values.filter((v) => v.claimed)).toHaveLength(1);
      expect(values.filter((v) => !v.claimed).every((v) => !v.claimed && v.state === 'pending')).toBe(true);
    }
    const counts = await snapshot(t.db);
    expect(Number(counts.effects) - Number(before.effects)).toBe(200);
    expect(Number(counts.attempts) - Number(before.attempts)).toBe(200);
  });

  it('S1: the pending row is committed before the claim returns (visible to a fresh read)', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const claim = await claimEffect(
      { db: t.db, actor: runtimeActor() },
      { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'order-1', target: 'a@example.com' },
    );
    expect(claim.claimed).toBe(true);
    const rows = await t.owner<{ state: string; attempts: string }>(
      `SELECT e.state, (SELECT count(*) FROM attempt a WHERE a.key = e.key) AS attempts FROM effect e WHERE e.key = $1`,
      [claim.key],
    );
    expect(rows.rows).toEqual([{ state: 'pending', attempts: '1' }]);
  });

  it('S1: only the runtime and the replay executor may claim; others are refused and audited (A4)', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const input = {
      runId: run.runId,
      tool: tool.name,
      action: 'receipt',
      recordId: 'order-2',
      target: 'b@example.com',
    };
    for (const actor of [
      userActor('operator'),
      userActor('support'),
      userActor('auditor'),
      userActor('admin'),
      reconcilerActor(),
      policyActor('p'),
    ]) {
      const before = await snapshot(t.db);
      const error = await claimEffect({ db: t.db, actor }, input).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).code).toBe('forbidden');
      expect(await snapshot(t.db)).toEqual(before);
      const refused = await t.db.auditEntry.findFirst({
        where: { chain: `refused:run:${run.runId}`, actorId: actor.id },
        orderBy: { id: 'desc' },
      });
      expect(refused).toMatchObject({ outcome: 'refused', action: 'effect.claim', actorKind: actor.kind });
    }
    const claim = await claimEffect({ db: t.db, actor: executorActor() }, input);
    expect(claim.claimed).toBe(true);
  });

  it('K1: a second run of the same trigger derives the same key, so the replay skips what is done', async () => {
    const tool = await makeTool(t.db);
    const trigger = `evt_replay_${Date.now()}`;
    const first = await makeRun(t.db, 'wf_k1', trigger);
    const second = await makeRun(t.db, 'wf_k1', trigger);
    expect(second.runId).not.toBe(first.runId);
    const runtime = runtimeActor();
    const a = await claimEffect(
      { db: t.db, actor: runtime },
      {
        runId: first.runId,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: 'cust-9',
        target: 'Anna@Example.com',
      },
    );
    expect(a.claimed).toBe(true);
    await completeEffect({ db: t.db, actor: runtime }, { key: a.key, receipt: 'msg-1' });
    // The model reworded everything else; the replay's claim carries only intent fields.
    const b = await claimEffect(
      { db: t.db, actor: runtime },
      {
        runId: second.runId,
        tool: tool.name,
        action: 'campaign_welcome',
        recordId: 'cust-9',
        target: ' anna@example.COM ',
      },
    );
    expect(b).toMatchObject({ claimed: false, key: a.key, epoch: 1, state: 'done' });
  });

  it('K1: a claim carrying generated content (subject) is refused with 422 naming the field, and writes nothing', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    const error = await claimEffect(
      { db: t.db, actor: runtimeActor() },
      { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r', target: 'c@example.com', subject: 'Hi!' },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation', details: { field: 'subject' } });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('K3: an invalid target is refused with a validation error on "target", and nothing is written', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const before = await snapshot(t.db);
    const error = await claimEffect(
      { db: t.db, actor: runtimeActor() },
      { runId: run.runId, tool: tool.name, action: 'receipt', recordId: 'r', target: 'not-an-address' },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation', details: { field: 'target' } });
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('K2: the longest accepted key is stored and indexed (fits the btree limit); a longer one is refused', async () => {
    const tool = await makeTool(t.db);
    const trigger = 'Ω中😀/%'.repeat(36); // 252 UTF-16 units, escapes to about 1,800 characters
    const run = await makeRun(t.db, 'wf_long', trigger);
    const recordId = String.fromCodePoint(...Array.from({ length: 140 }, (_, i) => 0x4e00 + ((i * 7919) % 20000)));
    const claim = await claimEffect(
      { db: t.db, actor: runtimeActor() },
      { runId: run.runId, tool: tool.name, action: 'receipt', recordId, target: 'd@example.com' },
    );
    expect(claim.claimed).toBe(true);
    expect(claim.key.length).toBeGreaterThan(2400);
    const done = await completeEffect({ db: t.db, actor: runtimeActor() }, { key: claim.key, receipt: 'msg-long' });
    expect(done.state).toBe('done');
    // The refused chain ("refused:effect:" + key) is indexed too.
    const refused = await completeEffect(
      { db: t.db, actor: runtimeActor() },
      { key: claim.key, receipt: 'again' },
    ).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'invalid_transition' });
    expect(await t.db.auditEntry.count({ where: { chain: `refused:effect:${claim.key}` } })).toBe(1);
    const tooLong = await claimEffect(
      { db: t.db, actor: runtimeActor() },
      { runId: run.runId, tool: tool.name, action: 'receipt', recordId: recordId + recordId, target: 'd@example.com' },
    ).catch((e: unknown) => e);
    expect(tooLong).toMatchObject({ code: 'validation' });
  });

  it('S1: the database refuses to make a held claim claimable again (awaiting_claim), even as raw SQL', async () => {
    const e = await makeEffect(t.db, 'pending');
    const before = await snapshot(t.db);
    const error = await t.db.$executeRawUnsafe(`UPDATE effect SET awaiting_claim = true WHERE key = $1`, e.key).then(
      () => null,
      (x: unknown) => x,
    );
    // The app role may not write the effect's columns at all (only the ledger's functions do).
    expect(String(error)).toMatch(/permission denied for table effect/);
    const owner = await t.owner(`UPDATE effect SET awaiting_claim = true WHERE key = $1`, [e.key]).then(
      () => null,
      (x: { code?: string }) => x,
    );
    expect(owner?.code).toBe('EL002');
    expect(await snapshot(t.db)).toEqual(before);
    expect(await claimEffect({ db: t.db, actor: runtimeActor() }, e.input)).toMatchObject({
      claimed: false,
      state: 'pending',
    });
  });

  it('S3: failed frees the key: 50 concurrent re-claimers after a failure, 200 trials: exactly one winner, no exceptions', async () => {
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const runtime = runtimeActor();
    for (let trial = 0; trial < 200; trial++) {
      const input = {
        runId: run.runId,
        tool: tool.name,
        action: 'receipt',
        recordId: `order-${trial}`,
        target: `buyer${trial}@example.com`,
      };
      const first = await claimEffect({ db: t.db, actor: runtime }, input);
      expect(first.claimed).toBe(true);
      await failEffect({ db: t.db, actor: runtime }, { key: first.key, epoch: first.epoch, evidence: { status: 550 } });
      const values = await race(50, () => claimEffect({ db: t.db, actor: runtime }, input));
      const winners = values.filter((v): v is Extract<ClaimEffectResult, { claimed: true }> => v.claimed);
      expect(winners).toHaveLength(1);
      // Same key, same epoch: a failed attempt needs no bump (E4).
      expect(winners[0]).toMatchObject({ key: first.key, epoch: 1 });
      expect(winners[0]!.attemptId).not.toBe((first as { attemptId: string }).attemptId);
      expect(values.filter((v) => !v.claimed).every((v) => !v.claimed && v.state === 'pending')).toBe(true);
    }
    const [row] = (
      await t.owner<{ attempts: string; effects: string }>(
        `SELECT (SELECT count(*) FROM attempt a JOIN effect_key k USING (key) WHERE k.tool = $1) AS attempts,
              (SELECT count(*) FROM effect e JOIN effect_key k USING (key) WHERE k.tool = $1) AS effects`,
        [tool.name],
      )
    ).rows;
    expect(row).toEqual({ attempts: '400', effects: '200' });
  });

  it('S3: the re-claim is audited with before failed -> after pending', async () => {
    const e = await makeEffect(t.db, 'failed');
    const again = await claimEffect({ db: t.db, actor: e.runtime }, e.input);
    expect(again.claimed).toBe(true);
    const last = await t.db.auditEntry.findFirst({ where: { chain: `effect:${e.key}` }, orderBy: { seq: 'desc' } });
    expect(last).toMatchObject({ action: 'effect.claim', beforeState: 'failed', afterState: 'pending', outcome: 'ok' });
  });

  it('S4: unknown is never re-claimable, by any number of claimers', async () => {
    const e = await makeEffect(t.db, 'unknown');
    const before = await snapshot(t.db);
    const values = await race(20, () => claimEffect({ db: t.db, actor: runtimeActor() }, e.input));
    expect(values.every((v) => !v.claimed && v.state === 'unknown')).toBe(true);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('S4: support resolves not sent -> pending awaiting claim; then exactly one of 50 claimers wins it (30 trials)', async () => {
    const tool = (await makeTool(t.db)).name;
    const runId = (await makeRun(t.db)).runId;
    for (let trial = 0; trial < 30; trial++) {
      const e = await makeEffect(t.db, 'unknown', { tool, runId });
      const resolved = await resolveUnknown(
        { db: t.db, actor: userActor('support') },
        { key: e.key, outcome: 'not_sent', reason: 'no trace at the provider' },
      );
      expect(resolved).toMatchObject({ from: 'unknown', state: 'pending' });
      const values = await race(50, () => claimEffect({ db: t.db, actor: e.runtime }, e.input));
      expect(values.filter((v) => v.claimed)).toHaveLength(1);
      expect(values.filter((v) => !v.claimed).every((v) => !v.claimed && v.state === 'pending')).toBe(true);
    }
  });

  it('S4: support resolves sent -> done with the receipt; the key stays done for claimers', async () => {
    const e = await makeEffect(t.db, 'unknown');
    const done = await resolveUnknown(
      { db: t.db, actor: userActor('support') },
      { key: e.key, outcome: 'sent', receipt: 'msg-found-in-provider-log', reason: 'found in the provider log' },
    );
    expect(done).toMatchObject({ from: 'unknown', state: 'done', receipt: 'msg-found-in-provider-log' });
    const again = await claimEffect({ db: t.db, actor: e.runtime }, e.input);
    expect(again).toMatchObject({ claimed: false, state: 'done' });
  });

  it('S4: the runtime marks an ambiguous outcome unknown; a pending key is not re-claimable either', async () => {
    const e = await makeEffect(t.db, 'pending');
    const again = await claimEffect({ db: t.db, actor: e.runtime }, e.input);
    expect(again).toMatchObject({ claimed: false, state: 'pending' });
    const unknown = await markUnknown(
      { db: t.db, actor: e.runtime },
      { key: e.key, evidence: { error: 'socket hang up after DATA' } },
    );
    expect(unknown).toMatchObject({ from: 'pending', state: 'unknown' });
  });
});
