// Issue 6, Faults: the crash matrix at reduced scale (5 real SIGKILLs per point). The full run is
// `npm run proof` (100 per point).
import { describe, expect, it } from 'vitest';
import { runReducedProof } from '../helpers/proof.ts';
import { runCrashMatrix, type PointResult } from '@/scripts/proof/parts/crash-matrix.ts';

describe('proof: crash matrix', () => {
  it(
    'S1 S2 S4 R1 C1 C2: kill -9 at each point of an effect leaves nothing, pending then unknown, unknown or done, and a claim in flight at the database commits or not (pending then unknown, or nothing); a restarted runtime resends nothing',
    { timeout: 300_000 },
    async () => {
      let points: PointResult[] = [];
      await runReducedProof(async (ctx) => {
        const r = await runCrashMatrix(ctx);
        points = r.points;
        return r.section;
      });
      expect(points.map((p) => p.point)).toEqual([
        'before-claim-commit',
        'after-claim-commit',
        'after-provider-answer',
        'after-receipt-written',
        'claim-in-flight',
      ]);
      for (const p of points) {
        expect.soft(p.violations, p.point).toEqual([]);
        expect.soft(p.kills, p.point).toBe(p.trials);
        expect.soft(p.resends, p.point).toBe(0);
      }
      const by = Object.fromEntries(points.map((p) => [p.point, p]));
      expect(by['before-claim-commit']!.atKill).toEqual({ none: 5 });
      expect(by['before-claim-commit']!.final).toEqual({ done: 5 });
      expect(by['after-claim-commit']!.insideWindow).toEqual({ pending: 5 });
      expect(by['after-claim-commit']!.final).toEqual({ unknown: 5 });
      expect(by['after-claim-commit']!.deliveriesFinal).toBe(0);
      // Found by its idempotency key: a hit is proof, so no settle window holds it back (C2).
      expect(by['after-provider-answer']!.insideWindow).toEqual({ done: 5 });
      expect(by['after-provider-answer']!.final).toEqual({ done: 5 });
      expect(by['after-provider-answer']!.deliveriesFinal).toBe(5);
      expect(by['after-receipt-written']!.atKill).toEqual({ done: 5 });
      expect(by['after-receipt-written']!.deliveriesFinal).toBe(5);
      // An orphaned claim statement may commit after its process died: nothing sent, pending, then unknown.
      const inFlight = by['claim-in-flight']!;
      expect(inFlight.deliveriesAtKill).toBe(0);
      expect((inFlight.final.done ?? 0) + (inFlight.final.unknown ?? 0)).toBe(inFlight.trials);
      expect(inFlight.final.done ?? 0).toBe(inFlight.atKill.none ?? 0);
    },
  );
});
