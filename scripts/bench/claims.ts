// Claims per second through the ledger (claimEffect: key derivation, tool/run lookup, one call to
// ledger_claim writing key head, effect, attempt, transition and hash-chained audit entry) versus
// the raw physical ceiling: one-row INSERT ... ON CONFLICT DO NOTHING RETURNING into a table of
// the same shape (LIKE effect INCLUDING ALL), same server, same run, same concurrency.
import pg from 'pg';
import { createDb } from '../../lib/db/client.ts';
import { claimEffect } from '../../lib/ledger/index.ts';
import { closedLoop, type LoadResult } from './harness.ts';

export interface ClaimBench {
  raw: LoadResult;
  ledger: LoadResult;
  contended: LoadResult;
  connections: number;
}

export async function benchClaims(opts: { ownerUrl: string; appUrl: string; claims: number; connections: number }): Promise<ClaimBench> {
  const { claims, connections } = opts;
  const owner = new pg.Pool({ connectionString: opts.ownerUrl, max: connections });
  await owner.query('CREATE TABLE bench_raw (LIKE effect INCLUDING ALL)');
  const db = createDb(opts.appUrl, connections);
  try {
    const tool = await db.toolDefinition.create({
      data: { name: 'bench_email', actions: ['notify'], targetType: 'email', provider: 'sandbox', generatedInputs: ['subject', 'body'] },
    });
    const event = await db.event.create({ data: { triggerId: 'bench-event', workflow: 'bench' } });
    const run = await db.run.create({ data: { workflow: 'bench', eventId: event.id, createdByKind: 'system', createdBy: 'bench' } });
    const actor = { kind: 'runtime' as const, id: 'bench', label: 'bench runtime', workflows: ['*'] };
    const claim = (i: number, prefix: string) =>
      claimEffect({ db, actor }, { runId: run.id, tool: tool.name, action: 'notify', recordId: `${prefix}-${i}`, target: `user${i}@example.com` });

    // Warm both paths (connections, plans, caches) before measuring.
    await closedLoop(500, connections, (i) => claim(i, 'warm'));
    await closedLoop(500, connections, (i) =>
      owner.query('INSERT INTO bench_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id', [`warm-${i}`, 'pending', run.id, `idem-${i}`, 'runtime', 'bench']),
    );

    console.log(`[bench] raw INSERT ... ON CONFLICT DO NOTHING: ${claims} rows, ${connections} connections`);
    const raw = await closedLoop(claims, connections, (i) =>
      owner.query(
        'INSERT INTO bench_raw (key, epoch, state, run_id, idempotency_key, changed_by_kind, changed_by) VALUES ($1, 1, $2, $3, $4, $5, $6) ON CONFLICT (key, epoch) DO NOTHING RETURNING id',
        [`v1/bench-event/bench_email/notify/rec-${i}/email/user${i}%40example.com`, 'pending', run.id, `el1-${i}`, 'runtime', 'bench runtime'],
      ),
    );
    console.log(`[bench] ledger claims: ${claims} claims, ${connections} connections`);
    const ledger = await closedLoop(claims, connections, (i) => claim(i, 'rec'));
    console.log('[bench] contended: 50 claimers per key');
    const contended = await closedLoop(Math.min(claims, 10_000), connections, (i) => claim(Math.floor(i / 50), 'hot'));
    return { raw, ledger, contended, connections };
  } finally {
    await db.$disconnect();
    await owner.end();
  }
}
