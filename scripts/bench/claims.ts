// Claims per second through the ledger (claimEffect: key derivation, tool/run lookup, one call to
// ledger_claim writing key head, effect, attempt, transition and hash-chained audit entry) versus
// (a) the raw physical ceiling: one-row INSERT ... ON CONFLICT DO NOTHING RETURNING into a table of
// the same shape (LIKE effect INCLUDING ALL), and (b) a peer doing the same dedupe job on the same
// database: pg-boss 10 `send` with a singletonKey on a queue with policy 'short' (see peer.ts).
// Same server, same run, same concurrency; at 0%, 50% and 99% duplicate claims.
import pg from 'pg';
import { createDb } from '../../lib/db/client.ts';
import { claimEffect } from '../../lib/ledger/index.ts';
import { closedLoop, type LoadResult } from './harness.ts';
import { startPeer } from './peer.ts';

export interface ClaimRateResult {
  /** Share of claims that repeat a key already claimed (or being claimed) by another claimer. */
  duplicateRate: number;
  claims: number;
  distinctKeys: number;
  raw: LoadResult;
  ledger: LoadResult;
  peer: LoadResult;
  /** Claims each path reported as won (the first of their key): must equal distinctKeys. */
  winners: { raw: number; ledger: number; peer: number };
  /** Rows each path holds afterwards for this rate's keys: must equal distinctKeys. */
  rows: { raw: number; ledger: number; peer: number };
}

export interface ClaimBench {
  connections: number;
  rates: ClaimRateResult[];
}

export const DEFAULT_DUPLICATE_RATES = [0, 0.5, 0.99];

const RAW_SQL =
  'INSERT INTO bench_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id';

/** Claims per key for a duplicate rate: 0 -> 1, 0.5 -> 2, 0.99 -> 100. Duplicates of a key arrive
 *  back to back, so they race the winner (the hard case: losers wait for its commit). */
function claimsPerKey(rate: number): number {
  return Math.max(1, Math.round(1 / (1 - rate)));
}

export async function benchClaims(opts: {
  ownerUrl: string;
  appUrl: string;
  claims: number;
  connections: number;
  duplicateRates?: number[];
  warmup?: number;
}): Promise<ClaimBench> {
  const { claims, connections } = opts;
  const rates = opts.duplicateRates ?? DEFAULT_DUPLICATE_RATES;
  const warmup = opts.warmup ?? 500;
  const owner = new pg.Pool({ connectionString: opts.ownerUrl, max: connections });
  await owner.query('CREATE TABLE IF NOT EXISTS bench_raw (LIKE effect INCLUDING ALL)');
  const db = createDb(opts.appUrl, connections);
  const peer = await startPeer(opts.ownerUrl, connections);
  try {
    const toolName = `bench_email_${Date.now().toString(36)}`;
    const tool = await db.toolDefinition.create({
      data: { name: toolName, actions: ['notify'], targetType: 'email', provider: 'sandbox', generatedInputs: ['subject', 'body'] },
    });
    const triggerId = `bench-event-${Date.now().toString(36)}`;
    const event = await db.event.create({ data: { triggerId, workflow: 'bench' } });
    const run = await db.run.create({ data: { workflow: 'bench', eventId: event.id, createdByKind: 'system', createdBy: 'bench' } });
    const actor = { kind: 'runtime' as const, id: 'bench', label: 'bench runtime', workflows: ['*'] };
    const claim = (record: string, k: number) =>
      claimEffect({ db, actor }, { runId: run.id, tool: tool.name, action: 'notify', recordId: `${record}-${k}`, target: `user${k}@example.com` });
    const rawKey = (prefix: string, k: number) => `v1/${triggerId}/${toolName}/notify/${prefix}-${k}/email/user${k}%40example.com`;
    const raw = (prefix: string, k: number) => owner.query(RAW_SQL, [rawKey(prefix, k), 'pending', run.id, `el1-${prefix}-${k}`, 'runtime', 'bench runtime']);

    // Warm all three paths (connections, plans, caches) before measuring.
    const warmQueue = await peer.queue('warm');
    await closedLoop(warmup, connections, (i) => claim('warm', i));
    await closedLoop(warmup, connections, (i) => raw('warm', i));
    await closedLoop(warmup, connections, (i) => peer.send(warmQueue, `warm-${i}`));

    const results: ClaimRateResult[] = [];
    for (const rate of rates) {
      const perKey = claimsPerKey(rate);
      const distinctKeys = Math.ceil(claims / perKey);
      const tag = `d${Math.round(rate * 100)}`;
      const keyOf = (i: number) => Math.floor(i / perKey);
      const winners = { raw: 0, ledger: 0, peer: 0 };

      console.log(`[bench] claims ${tag}: ${claims} claims over ${distinctKeys} keys, ${connections} connections: raw, ledger, peer`);
      const rawResult = await closedLoop(claims, connections, async (i) => {
        const r = await raw(tag, keyOf(i));
        if (r.rowCount === 1) winners.raw++;
      });
      const ledgerResult = await closedLoop(claims, connections, async (i) => {
        const r = await claim(tag, keyOf(i));
        if (r.claimed) winners.ledger++;
      });
      const queue = await peer.queue(tag);
      const peerResult = await closedLoop(claims, connections, async (i) => {
        if (await peer.send(queue, `${tag}-${keyOf(i)}`)) winners.peer++;
      });

      const rows = {
        raw: Number((await owner.query<{ n: string }>(`SELECT count(*) AS n FROM bench_raw WHERE key LIKE $1`, [`v1/${triggerId}/${toolName}/notify/${tag}-%`])).rows[0]!.n),
        ledger: Number((await owner.query<{ n: string }>(`SELECT count(*) AS n FROM effect_key WHERE run_id = $1 AND record_id LIKE $2`, [run.id, `${tag}-%`])).rows[0]!.n),
        peer: await peer.count(queue),
      };
      results.push({ duplicateRate: rate, claims, distinctKeys, raw: rawResult, ledger: ledgerResult, peer: peerResult, winners, rows });
      console.log(`[bench] claims ${tag}: raw ${rawResult.perSecond.toFixed(0)}/s, ledger ${ledgerResult.perSecond.toFixed(0)}/s, peer ${peerResult.perSecond.toFixed(0)}/s`);
    }
    return { connections, rates: results };
  } finally {
    await peer.stop();
    await db.$disconnect();
    await owner.end();
  }
}
