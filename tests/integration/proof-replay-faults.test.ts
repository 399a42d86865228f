// The replay-faults proof part (scripts/proof/parts/replay-faults.ts) at reduced scale: PostgreSQL
// restarted mid-replay, the SMTP server refusing mid-replay, statement timeouts, 4 workers on
// overlapping replays. Zero lost, zero duplicated.
import { describe, it } from 'vitest';
import { proof } from '@/scripts/proof/parts/replay-faults.ts';
import { runReducedProof } from '../helpers/proof.ts';

describe('proof: replay faults (reduced)', () => {
  it(
    'F3 F5 S2 S3 S4: database restarts, SMTP refusals, statement timeouts and 4 overlapping workers lose nothing and duplicate nothing',
    { timeout: 900_000 },
    async () => {
      const section = await runReducedProof(proof);
      for (const r of section.rows) console.log(`${r.tried}: ${r.observed}`);
    },
  );
});
