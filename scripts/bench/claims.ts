// Claims per second through the ledger (claimEffect: key derivation, tool/run lookup, one call to
// ledger_claim writing key head, effect, attempt, transition and hash-chained audit entry) versus
// (a) the raw physical ceiling: one-row INSERT ... ON CONFLICT DO NOTHING RETURNING into a table of
// the same shape (LIKE effect INCLUDING ALL), and (b) a peer doing the same dedupe job on the same
// database: pg-boss 10 `send` with a singletonKey on a queue with policy 'short' (see peer.ts).
// Same server, same run, same concurrency; at 0%, 50% and 99% duplicate claims.
import pg from 'pg';
import { createDb } from '@/lib/db/client.ts';
import { GroupCommit } from '@/lib/db/group-commit.ts';
import { claimEffect } from '@/lib/ledger/index.ts';
import { MAX_BATCH, MIN_SPLIT } from '@/lib/ledger/claim-batcher.ts';
import { alternatingRounds, closedLoop, type LoadResult } from './harness.ts';
import { startPeer } from './peer.ts';

export interface ClaimRateResult {
  /** Share of claims that repeat a key already claimed (or being claimed) by another claimer. */
  duplicateRate: number;
  claims: number;
  distinctKeys: number;
  raw: LoadResult;
  /** The raw insert with the ledger's group commit: the same batches, one multi-row INSERT each. */
  rawGrouped: LoadResult;
  ledger: LoadResult;
  peer: LoadResult;
  /** Claims each path reported as won (the first of their key): must equal distinctKeys. */
  winners: { raw: number; rawGrouped: number; ledger: number; peer: number };
  /** Rows each path holds afterwards for this rate's keys: must equal distinctKeys. */
  rows: { raw: number; rawGrouped: number; ledger: number; peer: number };
}

export interface ClaimBench {
  connections: number;
  rates: ClaimRateResult[];
}

export const DEFAULT_DUPLICATE_RATES = [0, 0.5, 0.99];

/** Each path's claims run in this many rounds, alternating with the other paths (harness.ts). A
 *  round covers whole keys at every rate used here (20,000 / 4 is a multiple of 100 claims per key). */
const ROUNDS = 4;

const RAW_SQL =
  'INSERT INTO bench_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id';
const RAW_GROUPED_SQL = `
  INSERT INTO bench_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by)
  SELECT k, 1, 'pending', $2::uuid, i, 'runtime', 'bench runtime' FROM unnest($1::text[], $3::text[]) AS u(k, i)
  ON CONFLICT (key, epoch) DO NOTHING RETURNING key`;

/** The raw insert grouped like the ledger's claims (lib/db/group-commit.ts, same batch slots): what
 *  the physical ceiling becomes when a commit is shared; a key is won by its first claimer in the batch. */
function groupedRaw(owner: pg.Pool, runId: string, connections: number) {
  return new GroupCommit<{ key: string; idem: string }, boolean>({
    maxInFlight: Math.max(1, Math.floor(connections / 4)),
    maxBatch: MAX_BATCH,
    minBatch: MIN_SPLIT,
    runOne: async (c) =>
      (await owner.query(RAW_SQL, [c.key, 'pending', runId, c.idem, 'runtime', 'bench runtime'])).rowCount === 1,
    runBatch: async (items) => {
      const { rows } = await owner.query<{ key: string }>(RAW_GROUPED_SQL, [
        items.map((c) => c.key),
        runId,
        items.map((c) => c.idem),
      ]);
      const inserted = new Set(rows.map((r) => r.key));
      return items.map((c) => inserted.delete(c.key));
    },
  });
}

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
      data: {
        name: toolName,
        actions: ['notify'],
        targetType: 'email',
        provider: 'sandbox',
        generatedInputs: ['subject', 'body'],
      },
    });
    const triggerId = `bench-event-${Date.now().toString(36)}`;
    const event = await db.event.create({ data: { triggerId, workflow: 'bench' } });
    const run = await db.run.create({
      data: { workflow: 'bench', eventId: event.id, createdByKind: 'system', createdBy: 'bench' },
    });
    const actor = { kind: 'runtime' as const, id: 'bench', label: 'bench runtime', workflows: ['*'] };
    const claim = (record: string, k: number) =>
      claimEffect(
        { db, actor },
        {
          runId: run.id,
          tool: tool.name,
          action: 'notify',
          recordId: `${record}-${k}`,
          target: `user${k}@example.com`,
        },
      );
    const rawKey = (prefix: string, k: number) =>
      `v1/${triggerId}/${toolName}/notify/${prefix}-${k}/email/user${k}%40example.com`;
    const raw = (prefix: string, k: number) =>
      owner.query(RAW_SQL, [rawKey(prefix, k), 'pending', run.id, `el1-${prefix}-${k}`, 'runtime', 'bench runtime']);
    const grouped = groupedRaw(owner, run.id, connections);
    const rawGrouped = (prefix: string, k: number) =>
      grouped.submit({ key: rawKey(`g${prefix}`, k), idem: `el1-g${prefix}-${k}` });

    // Warm all three paths (connections, plans, caches) before measuring.
    const warmQueue = await peer.queue('warm');
    await closedLoop(warmup, connections, (i) => claim('warm', i));
    await closedLoop(warmup, connections, (i) => raw('warm', i));
    await closedLoop(warmup, connections, (i) => rawGrouped('warm', i));
    await closedLoop(warmup, connections, (i) => peer.send(warmQueue, `warm-${i}`));

    const results: ClaimRateResult[] = [];
    for (const rate of rates) {
      const perKey = claimsPerKey(rate);
      const distinctKeys = Math.ceil(claims / perKey);
      const tag = `d${Math.round(rate * 100)}`;
      const keyOf = (i: number) => Math.floor(i / perKey);
      const winners = { raw: 0, rawGrouped: 0, ledger: 0, peer: 0 };

      console.log(
        `[bench] claims ${tag}: ${claims} claims over ${distinctKeys} keys, ${connections} connections: raw, raw grouped, ledger, peer in ${ROUNDS} alternating rounds`,
      );
      const queue = await peer.queue(tag);
      const measured = await alternatingRounds(
        ['raw', 'rawGrouped', 'ledger', 'peer'] as const,
        claims,
        ROUNDS,
        connections,
        async (path, i) => {
          if (path === 'raw') {
            if ((await raw(tag, keyOf(i))).rowCount === 1) winners.raw++;
          } else if (path === 'rawGrouped') {
            if (await rawGrouped(tag, keyOf(i))) winners.rawGrouped++;
          } else if (path === 'ledger') {
            if ((await claim(tag, keyOf(i))).claimed) winners.ledger++;
          } else if (await peer.send(queue, `${tag}-${keyOf(i)}`)) winners.peer++;
        },
      );
      const { raw: rawResult, rawGrouped: rawGroupedResult, ledger: ledgerResult, peer: peerResult } = measured;

      const rows = {
        raw: Number(
          (
            await owner.query<{ n: string }>(`SELECT count(*) AS n FROM bench_raw WHERE key LIKE $1`, [
              `v1/${triggerId}/${toolName}/notify/${tag}-%`,
            ])
          ).rows[0]!.n,
        ),
        rawGrouped: Number(
          (
            await owner.query<{ n: string }>(`SELECT count(*) AS n FROM bench_raw WHERE key LIKE $1`, [
              `v1/${triggerId}/${toolName}/notify/g${tag}-%`,
            ])
          ).rows[0]!.n,
        ),
        ledger: Number(
          (
            await owner.query<{ n: string }>(
              `SELECT count(*) AS n FROM effect_key WHERE run_id = $1 AND record_id LIKE $2`,
              [run.id, `${tag}-%`],
            )
          ).rows[0]!.n,
        ),
        peer: await peer.count(queue),
      };
      results.push({
        duplicateRate: rate,
        claims,
        distinctKeys,
        raw: rawResult,
        rawGrouped: rawGroupedResult,
        ledger: ledgerResult,
        peer: peerResult,
        winners,
        rows,
      });
      console.log(
        `[bench] claims ${tag}: raw ${rawResult.perSecond.toFixed(0)}/s, raw grouped ${rawGroupedResult.perSecond.toFixed(0)}/s, ledger ${ledgerResult.perSecond.toFixed(0)}/s, peer ${peerResult.perSecond.toFixed(0)}/s`,
      );
    }
    return { connections, rates: results };
  } finally {
    await peer.stop();
    await db.$disconnect();
    await owner.end();
  }
}
