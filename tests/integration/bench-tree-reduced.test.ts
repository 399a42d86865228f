// The audit tree's benchmark at tiny sizes, so its code keeps working: the appends, the proofs (from
// the database and over the simulated tree) and the signed bundle of every entry are checked for
// correctness (every proof verifies, the bundle verifies, every append landed), never for speed.
import { beforeAll, expect, it } from 'vitest';
import { benchTree, treeLines } from '@/scripts/bench/audit-tree.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
});

it('A2: the tree bench at 2,000 entries: appends with and without the tree, proofs that verify, a bundle that verifies', async () => {
  const b = await benchTree({
    ownerUrl: t.ownerUrl,
    appUrl: t.appUrl,
    size: 2_000,
    appends: 100,
    writers: 4,
    simulated: 100_000,
    proofs: 5,
    rounds: 2,
  });
  expect(b.appends.rounds).toHaveLength(2);
  for (const r of b.appends.rounds) expect([r.without.ops, r.with.ops]).toEqual([100, 100]);
  expect(b.proofs.map((p) => [p.leaves, p.inclusion.ok, p.consistency.ok])).toEqual([
    [2_500, true, true],
    [100_000, true, true],
  ]);
  // Logarithmic: at most ceil(log2(n)) hashes, and a consistency proof one more.
  expect(b.proofs[1]!.inclusion.hashes).toBeLessThanOrEqual(17);
  expect(b.proofs[1]!.consistency.hashes).toBeLessThanOrEqual(18);
  expect(b.bundle).toMatchObject({ ok: true, entries: 2_000 + 100 * 4 + 100 });
  expect(treeLines(b).join('\n')).toContain('goal (under 30 s) met');
});
