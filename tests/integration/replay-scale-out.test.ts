// Issue 7 scale-out, F3: 4 worker processes (scripts/worker.ts) against one database replay
// overlapping sets at once (two runs on two providers, two replays of the same frozen set each):
// per target exactly one delivery counted at the sandbox and at the SMTP server, zero duplicates,
// and the chunks were shared by the processes.
import { describe, expect, it } from 'vitest';
import { overlappingReplays } from '@/scripts/proof/parts/replay-faults.ts';
import { createTestDatabase } from '../helpers/db.ts';

const TARGETS_PER_RUN = Number(process.env.REPLAY_SCALE_TARGETS ?? 300);

describe('replay scale-out', () => {
  it(
    `F3 S1 S2: 4 worker processes replaying 2 runs x 2 overlapping replays (${TARGETS_PER_RUN} targets per run): exactly one delivery per target at the providers, zero duplicates`,
    { timeout: 420_000 },
    async () => {
      const t = await createTestDatabase({ poolSize: 10 });
      const r = await overlappingReplays(
        { appUrl: t.appUrl, ownerUrl: t.ownerUrl },
        { workers: 4, targetsPerRun: TARGETS_PER_RUN },
      );
      console.log(
        `scale-out: ${r.targets} targets, ${r.replays} replays, ${r.sent} sent, ${r.skippedLostClaim} lost claims, chunks per worker ${r.chunksPerWorker.join('/')}, ${r.seconds.toFixed(1)} s; items ${JSON.stringify(r.outcomes)}`,
      );
      expect(r.verdict.targets).toBe(2 * TARGETS_PER_RUN);
      expect(r.verdict.duplicated).toBe(0);
      expect(r.verdict.doneWithoutReceipt).toBe(0);
      expect(r.verdict.lost).toBe(0);
      expect(r.verdict.done).toBe(2 * TARGETS_PER_RUN); // no fault here: every target delivered
      // Each target was sent by exactly one of its two replays; the other one lost the claim (F3).
      expect(r.sent).toBe(2 * TARGETS_PER_RUN);
      expect(r.skippedLostClaim).toBe(2 * TARGETS_PER_RUN);
      // The work was spread: more than one process ran chunks.
      expect(r.chunksPerWorker.filter((n) => n > 0).length).toBeGreaterThan(1);
    },
  );
});
