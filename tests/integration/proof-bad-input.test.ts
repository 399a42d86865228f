// The bad-input proof part (scripts/proof/parts/bad-input.ts) at reduced scale: about 300 generated
// malformed inputs on every agent API endpoint, console server action and console route handler.
import { describe, expect, it } from 'vitest';
import { runReducedProof } from '../helpers/proof.ts';
import { proof } from '@/scripts/proof/parts/bad-input.ts';

describe('proof: bad input', () => {
  it('K3/Z5/S7/A4: malformed input gets only 4xx naming the field, changes no row; stored payloads render escaped', async () => {
    const section = await runReducedProof(proof);
    const cases = section.rows.filter((r) => !r.tried.startsWith('hostile')).reduce((n, r) => n + r.trials, 0);
    expect(cases).toBeGreaterThanOrEqual(250);
    for (const row of section.rows)
      expect.soft(row.observed, row.tried).not.toMatch(/field not named|failed to render/);
  }, 300_000);
});
