// The benchmark at tiny sizes, inside `npm test`, so the bench code keeps working (issue 7): every
// bench function runs and what it measured is checked for correctness (winners, counts, no
// duplicates, an intact and tamper-evident trail), never for speed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchAudit } from '@/scripts/bench/audit.ts';
import { benchClaims } from '@/scripts/bench/claims.ts';
import { benchConsole } from '@/scripts/bench/console.ts';
import { auditLines, claimLines, consoleLines, sdkLines } from '@/scripts/bench/index.ts';
import { benchReplay } from '@/scripts/bench/replay.ts';
import { benchSdkHttp } from '@/scripts/bench/sdk-http.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
});
afterAll(async () => {
  await t?.db.$disconnect();
});

describe('reduced benchmark', () => {
  it('S1: claims at 0%, 50% and 99% duplicates: raw, raw grouped, ledger and the pg-boss peer each let exactly one claimer per key win', async () => {
    const c = await benchClaims({ ownerUrl: t.ownerUrl, appUrl: t.appUrl, claims: 200, connections: 8, warmup: 20 });
    expect(c.rates.map((r) => r.duplicateRate)).toEqual([0, 0.5, 0.99]);
    expect(c.rates.map((r) => r.distinctKeys)).toEqual([200, 100, 2]);
    for (const r of c.rates) {
      expect(r.winners).toEqual({
        raw: r.distinctKeys,
        rawGrouped: r.distinctKeys,
        ledger: r.distinctKeys,
        peer: r.distinctKeys,
      });
      expect(r.rows).toEqual({
        raw: r.distinctKeys,
        rawGrouped: r.distinctKeys,
        ledger: r.distinctKeys,
        peer: r.distinctKeys,
      });
      for (const load of [r.raw, r.rawGrouped, r.ledger, r.peer]) expect(load.ops).toBe(200);
    }
    expect(claimLines(c).join('\n')).not.toContain('**no**');
  }, 180_000);

  it('S1, K1: effects through the SDK over HTTP are done once each; the reworded replay sends nothing', async () => {
    const s = await benchSdkHttp({
      ownerUrl: t.ownerUrl,
      appUrl: t.appUrl,
      effects: 40,
      agents: 4,
      server: 'in process',
    });
    // Three alternating rounds of whole effects: at least the 40 asked for.
    expect(s.effects).toBeGreaterThanOrEqual(40);
    expect(s.deliveries.byReplay).toBe(0);
    expect(s.deliveries.expected).toBeGreaterThan(0);
    expect(s.deliveries.bySdk).toBe(s.deliveries.expected);
    expect(s.deliveries.distinctTargets).toBe(s.deliveries.expected);
    expect(s.done).toBe(s.effects);
    expect(s.send.rounds).toHaveLength(3);
    expect(s.send.floor.perSecond).toBeGreaterThan(0);
    expect(s.added.direct.p50ms).toBeGreaterThan(0);
    expect(s.added.product.p50ms).toBeGreaterThan(0);
    expect(sdkLines(s, 1).join('\n')).not.toContain('wrong counts');
  }, 120_000);

  it('A2: the audit bench loads a valid trail, verification names a tampered entry, the hot chain has no lost or doubled entries', async () => {
    const a = await benchAudit({
      ownerUrl: t.ownerUrl,
      appUrl: t.appUrl,
      sizes: [300, 3000],
      appends: 100,
      writers: 8,
      repeat: 2,
    });
    expect(a.verify.map((v) => v.ok)).toEqual([true, true]);
    // The test database may already hold entries from the tests above: at least the sizes asked for.
    expect(a.verify[0]!.entries).toBeGreaterThanOrEqual(300);
    expect(a.verify[1]!.entries).toBeGreaterThanOrEqual(3000);
    expect(a.tamper.reportedEntryId).toBe(a.tamper.entryId);
    expect(a.tamper.problem).toBe('content does not match its hash');
    expect(a.hotChainSeq).toBe(100);
    expect(a.manySubjects.ops).toBe(100);
    expect(Object.keys(a.queries)).toHaveLength(12);
    expect(auditLines(a).join('\n')).not.toMatch(/\*\*(broken|wrong|mismatch)\*\*/);
  }, 180_000);

  it('P3: the console bench loads runs of each size with their plan items and effects', async () => {
    const sizes = await benchConsole({ ownerUrl: t.ownerUrl, appUrl: t.appUrl, sizes: [100, 1000], repeat: 2 });
    expect(sizes.map((s) => s.rows)).toEqual([
      { planItems: 100, effects: 90 },
      { planItems: 1000, effects: 900 },
    ]);
    expect(consoleLines(sizes).join('\n')).not.toContain('wrong counts');
  }, 120_000);

  it('F3: the replay bench sends every target once (it throws on a duplicate) and reports its figures', async () => {
    const figures = await benchReplay({ ownerUrl: t.ownerUrl, appUrl: t.appUrl, sizes: [30], scaleOutWorkers: 2 });
    expect(figures['replay 30: sends/s (1 worker)']).toBeGreaterThan(0);
  }, 240_000);
});
