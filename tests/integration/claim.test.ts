import { describe, expect, it } from 'vitest';
import { claimEffect, completeEffect, failEffect } from '../../lib/ledger/index.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { makeRun, makeTool, runtimeActor, snapshot } from '../helpers/factories.ts';

describe('claim', () => {
  it('S1: 50 concurrent claimers of one key, 200 trials: exactly one winner each, losers skip without error', async () => {
    const t = await createTestDatabase({ poolSize: 50 });
    const tool = await makeTool(t.db);
    const run = await makeRun(t.db);
    const actor = runtimeActor();
    for (let trial = 0; trial < 200; trial++) {
      const input = { runId: run.runId, tool: tool.name, action: 'campaign_welcome', recordId: `customer-${trial}`, target: `user${trial}@example.com` };
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => claimEffect({ db: t.db, actor }, input)));
      const rejected = results.filter((r) => r.status === 'rejected');
      expect(rejected).toEqual([]);
      const values = results.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof claimEffect>>>).value);
      expect(values.filter((v) => v.claimed)).toHaveLength(1);
      expect(values.filter((v) => !v.claimed).every((v) => !v.claimed && v.state === 'pending')).toBe(true);
    }
    const counts = await snapshot(t.db);
    expect(counts.effects).toBe(200);
    expect(counts.attempts).toBe(200);
  });
});
