// The load proof part at reduced scale: 50 trials of 50 concurrent claimers of one key. The console
// row runs in the browser suite (tests/e2e/zz-console-load.spec.ts), which has a built server.
import { describe, expect, it } from 'vitest';
import { proof } from '@/scripts/proof/parts/load.ts';
import { runReducedProof } from '../helpers/proof.ts';

describe('proof: load (reduced)', () => {
  it('S1: 50 trials of 50 concurrent claimers of one key: exactly one winner each, every loser skips, no exception', async () => {
    const section = await runReducedProof(proof);
    expect(section.rows).toHaveLength(1);
    const [row] = section.rows;
    expect(row!.trials).toBe(50);
    expect(row!.observed).toMatch(
      /^50 of 50 trials with exactly one winner; 2450 losers told they skipped \(state pending\), 0 told otherwise; 0 exceptions;/,
    );
    expect(row!.observed).toMatch(
      /database: 0 trial keys without an effect row, 0 extra effect\/attempt rows; 50 distinct connections;/,
    );
  }, 300_000);
});
