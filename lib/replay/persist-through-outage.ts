// Retrying a database write through an outage: after a send, the provider's answer exists only in
// this process, so losing the write would turn a delivery into an unknown.
import { isConnectionLoss } from '../db/connection-loss.ts';

/** Bounded exponential backoff: 0.25 s doubling to at most `capMs`, with jitter. */
export function backoffMs(attempt: number, capMs = 30_000, baseMs = 250): number {
  const ms = Math.min(capMs, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

/** After a send the provider's answer exists only in this process: its statement is retried through a
 *  database outage or a statement timeout (bounded backoff, up to `forMs`), so a restart does not turn a delivery into an
 *  unknown. A retry that finds the state already moved by this same statement (the first attempt
 *  committed, its reply was lost) counts as applied. */
export async function persistThroughOutage<T>(
  what: string,
  fn: () => Promise<T>,
  log?: (l: string) => void,
  forMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const timedOut = (error as { code?: string }).code === '57014'; // statement timeout: a lock held elsewhere
      if ((!isConnectionLoss(error) && !timedOut) || Date.now() > deadline) throw error;
      if (attempt === 0) log?.(`${what}: ${(error as Error).message}; retrying`);
      await new Promise((r) => setTimeout(r, backoffMs(attempt, 5_000, 100)));
    }
  }
}
