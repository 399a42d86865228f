// Load, row 1 (S1): `trials` times, `claimers` concurrent claimers of one fresh key through
// claimEffect (the function the API's POST /api/v1/effects/claim calls), each on its own database
// connection (a pool of `claimers` connections, all checked out at once). Per trial: exactly one
// winner, every loser told it skipped (claimed: false, state pending), no exception; afterwards the
// database is counted as the owner: one effect row and one attempt per trial key.
import pg from 'pg';
import { createDb, sqlPool } from '@/lib/db/client.ts';
import { claimEffect, createRun, type Actor, type ClaimEffectResult } from '@/lib/ledger/index.ts';
import type { ProofDatabase, ProofRow } from '../section.ts';

export interface ClaimRaceResult {
  trials: number;
  claimers: number;
  /** Trials with no winner (nobody may send: the effect would be silently lost). */
  noWinner: number;
  /** Winners beyond the first, summed over trials (each would be a second send). */
  extraWinners: number;
  /** Losers told something other than "skipped, pending". */
  wrongLoserAnswer: number;
  /** Claim calls that threw. */
  exceptions: number;
  firstException?: string;
  /** Trial keys with no effect row in the database (with the winner counts: lost). */
  rowsMissing: number;
  /** Effect or attempt rows beyond one per trial key (a second claim got through). */
  rowsExtra: number;
  distinctConnections: number;
  claimsPerSecond: number;
  trialP50ms: number;
  trialP95ms: number;
  seconds: number;
}

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : 0;
}

export async function raceClaims(
  database: ProofDatabase,
  options: { trials: number; claimers: number; log?: (line: string) => void },
): Promise<ClaimRaceResult> {
  const { trials, claimers } = options;
  const db = createDb(database.appUrl, claimers);
  const owner = new pg.Client({ connectionString: database.ownerUrl });
  await owner.connect();
  try {
    const tool = `proof_claim_${Date.now().toString(36)}`;
    await db.toolDefinition.create({
      data: {
        name: tool,
        actions: ['notify'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: ['subject', 'body'],
        supportsIdempotencyKey: true,
        supportsReceiptLookup: true,
      },
    });
    const run = await createRun(
      { db, actor: { kind: 'system', id: 'proof', label: 'proof: load' } },
      { workflow: 'proof_load_claims', triggerId: `evt_${tool}` },
    );
    const runtime: Actor = {
      kind: 'runtime',
      id: '00000000-0000-4000-8000-00000000c1a1',
      label: 'proof claim racer',
      workflows: ['proof_load_claims'],
    };
    // Open every connection first, so each claimer of a trial really runs on its own connection.
    const pool = sqlPool(db)!;
    const clients = await Promise.all(Array.from({ length: claimers }, () => pool.connect()));
    const backendPids = await Promise.all(
      clients.map(async (c) => (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid),
    );
    for (const c of clients) c.release();
    const distinctConnections = new Set(backendPids).size;

    const result: ClaimRaceResult = {
      trials,
      claimers,
      noWinner: 0,
      extraWinners: 0,
      wrongLoserAnswer: 0,
      exceptions: 0,
      rowsMissing: 0,
      rowsExtra: 0,
      distinctConnections,
      claimsPerSecond: 0,
      trialP50ms: 0,
      trialP95ms: 0,
      seconds: 0,
    };
    const durations: number[] = [];
    const started = performance.now();
    for (let trial = 0; trial < trials; trial++) {
      const input = {
        runId: run.runId,
        tool,
        action: 'notify',
        recordId: `rec-${trial}`,
        target: `racer${trial}@proof.example.com`,
      };
      const t0 = performance.now();
      const settled = await Promise.allSettled(
        Array.from({ length: claimers }, () => claimEffect({ db, actor: runtime }, input)),
      );
      durations.push(performance.now() - t0);
      const values: ClaimEffectResult[] = [];
      for (const s of settled) {
        if (s.status === 'fulfilled') values.push(s.value);
        else {
          result.exceptions++;
          result.firstException ??= String((s.reason as Error)?.message ?? s.reason);
        }
      }
      const winners = values.filter((v) => v.claimed).length;
      if (winners === 0) result.noWinner++;
      if (winners > 1) result.extraWinners += winners - 1;
      result.wrongLoserAnswer += values.filter((v) => !v.claimed && v.state !== 'pending').length;
      if ((trial + 1) % 100 === 0) options.log?.(`claim race: ${trial + 1}/${trials} trials`);
    }
    result.seconds = (performance.now() - started) / 1000;
    result.claimsPerSecond = (trials * claimers) / result.seconds;
    durations.sort((a, b) => a - b);
    result.trialP50ms = pct(durations, 0.5);
    result.trialP95ms = pct(durations, 0.95);
    // Counted in the database: one effect and one attempt per trial key, nothing else for this tool.
    const [counted] = (
      await owner.query<{ keys: number; with_effect: number; extra: number }>(
        `SELECT count(*)::int AS keys, count(*) FILTER (WHERE x.effects > 0)::int AS with_effect,
              coalesce(sum(greatest(x.effects - 1, 0) + greatest(x.attempts - 1, 0)), 0)::int AS extra
         FROM (SELECT (SELECT count(*) FROM effect e WHERE e.key = k.key) AS effects, (SELECT count(*) FROM attempt a WHERE a.key = k.key) AS attempts
                 FROM effect_key k WHERE k.tool = $1) x`,
        [tool],
      )
    ).rows;
    result.rowsMissing = Math.max(0, trials - counted!.with_effect);
    result.rowsExtra = counted!.extra + Math.max(0, counted!.keys - trials);
    return result;
  } finally {
    await owner.end();
    await db.$disconnect();
  }
}

export function claimRaceRow(r: ClaimRaceResult): ProofRow {
  return {
    tried: `${r.claimers} concurrent claimers of one fresh key (claimEffect, the API's claim path), each on its own connection`,
    trials: r.trials,
    lost: Math.max(r.noWinner, r.rowsMissing),
    duplicated: Math.max(r.extraWinners, r.rowsExtra),
    unauthorized: 0,
    observed:
      `${r.trials - r.noWinner - Math.min(r.extraWinners, r.trials)} of ${r.trials} trials with exactly one winner; ` +
      `${r.trials * (r.claimers - 1) - r.wrongLoserAnswer} losers told they skipped (state pending), ${r.wrongLoserAnswer} told otherwise; ` +
      `${r.exceptions} exceptions${r.firstException ? ` (first: ${r.firstException.slice(0, 120)})` : ''}; ` +
      `database: ${r.rowsMissing} trial keys without an effect row, ${r.rowsExtra} extra effect/attempt rows; ${r.distinctConnections} distinct connections; ` +
      `${Math.round(r.claimsPerSecond)} claim calls/s; one trial p50 ${r.trialP50ms.toFixed(1)} ms, p95 ${r.trialP95ms.toFixed(1)} ms`,
  };
}
