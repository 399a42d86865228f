// The read-only answer of a claim (lib/ledger/commands/peek-claim.ts, SQL ledger_claim_peek): a key
// held at its current epoch answers as the losing claim would, from one read that writes nothing; a
// key a claim could take (fresh, failed, awaiting its claim) has no such answer.
import { describe, expect, it } from 'vitest';
import { claimEffect, peekClaim } from '@/lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeEffect, makeRun, makeTool, runtimeActor, snapshot, suffix, type TestState } from '../helpers/factories.ts';

const t = await createTestDatabase({ poolSize: 16 });

describe('claim peek (a claim answered from one read)', () => {
  it('S1: held keys (pending, done, unknown, revoked, stuck) get the losing claim answer; fresh, failed and awaiting keys get none; nothing is written', async () => {
    const tool = (await makeTool(t.db)).name;
    const run = await makeRun(t.db);
    const states: TestState[] = ['pending', 'done', 'unknown', 'revoked', 'stuck', 'failed', 'awaiting'];
    const effects = await Promise.all(states.map((state) => makeEffect(t.db, state, { tool, runId: run.runId })));
    const fresh = {
      runId: run.runId,
      tool,
      action: 'campaign_welcome',
      recordId: 'r-new',
      target: `new-${suffix()}@example.com`,
    };
    const before = await snapshot(t.db);
    // Started together: each still gets its own answer.
    const answers = await Promise.all([
      ...effects.map((e) => peekClaim({ db: t.db, actor: runtimeActor() }, e.input)),
      peekClaim({ db: t.db, actor: runtimeActor() }, fresh),
    ]);
    expect(await snapshot(t.db)).toEqual(before);
    for (const [i, state] of states.entries()) {
      const answer = answers[i];
      if (state === 'failed' || state === 'awaiting') {
        expect(answer, state).toBeNull();
        continue;
      }
      // The same answer the claim itself gives a loser.
      const claim = await claimEffect({ db: t.db, actor: runtimeActor() }, effects[i]!.input);
      expect(claim.claimed, state).toBe(false);
      expect(answer, state).toEqual(claim);
      expect(answer!.state).toBe(state);
    }
    expect(answers[states.length]).toBeNull();
  });

  it('S1: a peek of a held key and a claim racing for a fresh key: the claim still wins exactly once', async () => {
    const tool = (await makeTool(t.db)).name;
    const run = await makeRun(t.db);
    const input = {
      runId: run.runId,
      tool,
      action: 'campaign_welcome',
      recordId: 'r1',
      target: `race-${suffix()}@example.com`,
    };
    const [peek, ...claims] = await Promise.all([
      peekClaim({ db: t.db, actor: runtimeActor() }, input),
      ...Array.from({ length: 8 }, () => claimEffect({ db: t.db, actor: runtimeActor() }, input)),
    ]);
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    // Whether the peek ran before or after the winning commit, it never claims: null or the loser's answer.
    if (peek !== null) expect(peek.claimed).toBe(false);
  });
});
