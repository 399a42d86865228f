// Proof part "load" (issue 6, Load): concurrent claimers of one key (S1), and the console under
// load: signed-in sessions browsing a 1,000,000-item run over real HTTP while a forced replay runs
// in the worker (P3, A2, Z2, Z4, F3).
//
// Scale 'full' (`npm run proof`): 1,000 claim trials, then the console row against its own
// database, sandbox provider, worker process and `next start`.
// Scale 'reduced' (`npm test`, tests/integration/proof-load.test.ts): 50 claim trials only. The
// console row needs a built Next server, which vitest does not have; its reduced version is the
// browser suite's tests/e2e/zz-console-load.spec.ts, which drives the same browsing code
// (scripts/proof/support/load-browse.ts) with 10 sessions against the e2e server.
import type { ProofPart, ProofRow } from '../section.ts';
import { claimRaceRow, raceClaims } from '../support/load-claims.ts';

export const proof: ProofPart = async (ctx) => {
  const full = ctx.scale === 'full';
  const rows: ProofRow[] = [];
  const notes: string[] = [];

  const claimsDb = await ctx.newDatabase();
  const trials = full ? 1000 : 50;
  ctx.log(`claim race: ${trials} trials of 50 concurrent claimers`);
  const race = await raceClaims(claimsDb, { trials, claimers: 50, log: ctx.log });
  rows.push(claimRaceRow(race));
  notes.push(
    'Claim race: lost = trials with no winner (or a trial key without an effect row); duplicated = winners beyond one per trial ' +
      '(or extra effect/attempt rows, counted as the owner). A loser told anything but "skipped, pending", and any exception, ' +
      'are in the observed column; the reduced test asserts both are 0.',
  );

  if (full) {
    const { consoleUnderLoad } = await import('../support/load-console.ts');
    const result = await consoleUnderLoad(ctx);
    rows.push(result.row);
    notes.push(...result.notes);
  } else {
    notes.push(
      'Console under load is not run at reduced scale here (it needs a built Next server): tests/e2e/zz-console-load.spec.ts runs ' +
        "the same browsing code with 10 signed-in sessions against the browser suite's server and asserts zero error responses.",
    );
  }

  return {
    title: 'Load: concurrent claims and the console under load',
    proves: 'S1, F3, P3, Z2, Z4',
    rows,
    notes,
  };
};
