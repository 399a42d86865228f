// Per-provider rate limit for the executor, global across every worker process on the database: each
// send reserves the provider's next free slot in `provider_rate_slot` with one atomic upsert (the row
// lock orders concurrent reservations), then waits until its slot. Slots are 1/rate seconds apart on
// the database's clock, so however many workers send, the provider sees at most
// `rateLimitPerSecond` sends in any second (plus the one that opens it). An idle provider's slot is
// in the past: the next send starts at once, and no burst is saved up while idle.
import { sqlRows, type Db } from '@/lib/db/client.ts';

// greatest(next_at, now) is the reserved slot; the row moves on by one interval. clock_timestamp()
// (not now()) so that a slow transaction does not reserve a slot in the past.
const RESERVE_SQL = `
  INSERT INTO provider_rate_slot AS s (provider, next_at)
  VALUES ($1, clock_timestamp() + make_interval(secs => $2::float8))
  ON CONFLICT (provider) DO UPDATE
    SET next_at = greatest(s.next_at, clock_timestamp()) + make_interval(secs => $2::float8)
  RETURNING s.next_at - make_interval(secs => $2::float8) AS slot,
            greatest(0, extract(epoch FROM (s.next_at - make_interval(secs => $2::float8)) - clock_timestamp()) * 1000)::float8 AS wait_ms`;

export class RateLimiter {
  constructor(
    private readonly db: Db,
    private readonly limitOf: (provider: string) => number | undefined,
  ) {}

  /** Resolves when a send to `provider` may start, with the slot it was given (the database's time);
   *  undefined when the provider has no limit. */
  async acquire(provider: string): Promise<Date | undefined> {
    const rate = this.limitOf(provider);
    if (!rate) return undefined;
    const [row] = await sqlRows<{ slot: Date; wait_ms: number }>(this.db, RESERVE_SQL, [provider, 1 / rate]);
    if (!row) throw new Error(`rate limit: no slot reserved for ${provider}`);
    // Waiting for the reserved slot is the rate limit itself (not a stand-in for synchronization).
    if (row.wait_ms > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(row.wait_ms)));
    return row.slot;
  }
}
