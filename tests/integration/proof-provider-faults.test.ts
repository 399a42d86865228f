// Issue 6, Faults: provider and database faults at reduced scale (3 trials per provider fault, 2 per
// database fault). The full run is `npm run proof`.
import { describe, expect, it } from 'vitest';
import { runReducedProof } from '../helpers/proof.ts';
import { runProviderFaults, type FaultResult } from '@/scripts/proof/parts/provider-faults.ts';

describe('proof: provider and database faults', () => {
  it(
    'S2 S3 S4 S5 S6 R1 R3 C1 C2: rejects, 5xx, timeouts after accept, lagging lookups, already_existed pointers, lost tokens, SMTP refusals, pool exhaustion, refused connections and statement timeouts end in the right state with the raw response kept, no done without a receipt, no duplicate',
    { timeout: 300_000 },
    async () => {
      let faults: FaultResult[] = [];
      await runReducedProof(async (ctx) => {
        const r = await runProviderFaults(ctx);
        faults = r.faults;
        return r.section;
      });
      expect(faults.map((f) => f.name)).toEqual([
        'reject',
        'server-error',
        'server-error-after-send',
        'timeout-after-accept',
        'lookup-lag-inside',
        'lookup-lag-after',
        'already-existed-failed',
        'already-existed-delivered',
        'lost-token',
        'smtp-refused',
        'pool-exhausted',
        'db-connections-refused',
        'statement-timeout-claim',
        'statement-timeout-outcome',
      ]);
      for (const f of faults) {
        expect.soft(f.violations, f.name).toEqual([]);
        expect.soft(f.rawKept, `${f.name}: R1`).toBe(f.rawExpected);
      }
      const final = (name: string) => faults.find((f) => f.name === name)!.phases.at(-1)!.states;
      expect(final('reject')).toEqual({ done: 3 });
      expect(final('server-error-after-send')).toEqual({ 'skipped (unknown)': 3 });
      expect(final('timeout-after-accept')).toEqual({ 'skipped (unknown)': 3 });
      expect(final('already-existed-failed')).toEqual({ 'skipped (stuck)': 3 });
      expect(final('lost-token')).toEqual({ 'skipped (stuck)': 3 });
      expect(final('lookup-lag-after')).toEqual({ 'skipped (unknown)': 3 });
      expect(final('smtp-refused')).toEqual({ 'skipped (done)': 3 });
      expect(final('statement-timeout-outcome')).toEqual({ done: 2 });
    },
  );
});
