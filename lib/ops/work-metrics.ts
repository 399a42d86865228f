// Metrics of the work behind the API, added to the process's registry (lib/ops/metrics.ts):
//  - provider calls by provider and result, with their latency (the replay executor's sends),
//  - replay items by the outcome a handler recorded (rate() of it is the replay throughput),
//  - replay progress: items of running replays by state, read from the replay rows at each scrape,
//    reported by the worker leader only, so summing over processes does not multiply it.
import { Counter, Gauge, Histogram } from 'prom-client';
import { sqlRows, type Db } from '../db/client.ts';
import { metrics } from './metrics.ts';

/** What a provider call came to: an answer (whatever it said), provably not sent, or ambiguous. */
export type ProviderCallResult = 'answered' | 'not_sent' | 'ambiguous';

function build() {
  const registers = [metrics().registry];
  let progressSource: { db: Db; reports: () => boolean } | undefined;
  return {
    setProgressSource(source: { db: Db; reports: () => boolean }) {
      progressSource = source;
    },
    providerCalls: new Counter({
      name: 'ledger_provider_calls_total',
      help: 'Calls to providers by the replay executor, by provider and result (answered: the provider answered, whatever it said; not_sent: provably nothing sent; ambiguous: timeout or lost answer, left to the reconciler).',
      labelNames: ['provider', 'result'] as const,
      registers,
    }),
    providerSeconds: new Histogram({
      name: 'ledger_provider_call_duration_seconds',
      help: 'Latency of provider calls, by provider and result.',
      labelNames: ['provider', 'result'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    replayItems: new Counter({
      name: 'ledger_replay_items_total',
      help: 'Replay items finished by this process, by outcome (sent, skipped, failed, unknown, interrupted); rate() is the replay throughput.',
      labelNames: ['outcome'] as const,
      registers,
    }),
    replayProgress: new Gauge({
      name: 'ledger_replay_progress_items',
      help: 'Items of the running replays by state (sent, skipped, failed, unknown, remaining), reported by the worker leader only.',
      labelNames: ['state'] as const,
      registers,
      async collect() {
        this.reset();
        const source = progressSource;
        if (!source?.reports()) return;
        let row: Record<string, number> | undefined;
        try {
          [row] = await sqlRows<Record<string, number>>(
            source.db,
            `SELECT count(*)::int AS replays, coalesce(sum(sent), 0)::int AS sent, coalesce(sum(skipped), 0)::int AS skipped,
                    coalesce(sum(failed), 0)::int AS failed, coalesce(sum(unknown), 0)::int AS unknown,
                    coalesce(sum(greatest(total - sent - skipped - failed - unknown, 0)), 0)::int AS remaining
               FROM replay WHERE status = 'running'`,
            [],
          );
        } catch {
          // The database cannot be reached: the scrape goes on without this gauge (its absence, and the
          // worker's /readyz, tell the story) rather than failing every metric with it.
          return;
        }
        for (const state of ['sent', 'skipped', 'failed', 'unknown', 'remaining'])
          this.set({ state }, Number(row?.[state] ?? 0));
      },
    }),
  };
}

type WorkMetrics = ReturnType<typeof build>;
const holder = globalThis as unknown as { __ledgerWorkMetrics?: WorkMetrics };
const work = () => (holder.__ledgerWorkMetrics ??= build());

export function observeProviderCall(provider: string, result: ProviderCallResult, seconds: number): void {
  const m = work();
  m.providerCalls.inc({ provider, result });
  m.providerSeconds.observe({ provider, result }, seconds);
}

export function observeReplayItem(outcome: string): void {
  work().replayItems.inc({ outcome });
}

/** Reports the running replays' progress from this database while `reports()` (the worker leader). */
export function watchReplays(db: Db, reports: () => boolean): void {
  work().setProgressSource({ db, reports });
}
