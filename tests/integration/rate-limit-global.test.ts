// Provider rate limits are global across worker processes (issue 17, item 3): two limiters with their
// own connection pools, as two workers have, share one provider's rate through PostgreSQL.
import { describe, expect, it } from 'vitest';
import { createDb, sqlPool } from '@/lib/db/client.ts';
import { RateLimiter } from '@/lib/replay/rate-limit.ts';
import { createTestDatabase } from '../helpers/db.ts';

const t = await createTestDatabase({ poolSize: 4 });

const RATE = 20;
const limits = (name: string) => (name === 'mail' ? RATE : undefined);

describe('global provider rate limit', () => {
  it('two workers together never exceed the provider rate over any one-second window', async () => {
    // Each limiter has its own pool, as each worker process has (closed before the database is dropped).
    const workerA = createDb(t.appUrl, 4);
    const workerB = createDb(t.appUrl, 4);
    const a = new RateLimiter(workerA, limits);
    const b = new RateLimiter(workerB, limits);
    const started = performance.now();
    const sends: Promise<Date | undefined>[] = [];
    for (let i = 0; i < 30; i++) for (const limiter of [a, b]) sends.push(limiter.acquire('mail'));
    const granted = await Promise.all(sends).finally(async () => {
      // Only their node-postgres pools were used (the limiter's one statement), so those are what to close.
      await sqlPool(workerA)?.end();
      await sqlPool(workerB)?.end();
    });
    const elapsed = performance.now() - started;

    // The slots the database handed out: all distinct, 1/RATE s apart, so any one-second window holds
    // at most RATE + 1 of them.
    const slots = granted.map((slot) => slot!.getTime()).sort((x, y) => x - y);
    expect(new Set(slots).size).toBe(60);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBeGreaterThanOrEqual(1000 / RATE - 1);
    for (let i = 0; i + RATE + 1 < slots.length; i++) expect(slots[i + RATE + 1]! - slots[i]!).toBeGreaterThan(1000);
    // And the sends really waited for them: 60 sends at 20/s take almost three seconds, not one
    // (each limiter alone would have let 20 through at once with per-process buckets).
    expect(elapsed).toBeGreaterThan(2_400);
  });

  it('an unlimited provider is not throttled and reserves nothing', async () => {
    const a = new RateLimiter(t.db, limits);
    expect(await a.acquire('webhook')).toBeUndefined();
    const rows = await t.owner(`SELECT provider FROM provider_rate_slot ORDER BY provider`);
    expect(rows.rows).toEqual([{ provider: 'mail' }]);
  });
});
