// A handler's outcomes not yet added to the replay's counters (the progress bar lags by <= 0.5 s;
// a crash loses at most that much of the count, and the completion recounts from the items).
import { sqlRows, type Db } from '../db/client.ts';
import { observeReplayItem } from '../ops/work-metrics.ts';
import { RECOUNT_COMPLETED_SQL } from './complete-replay.ts';
import { outcomeCounts, recordItemOutcome, type ItemOutcome } from './item-outcome.ts';

export class Tally {
  private d = { sent: 0, skipped: 0, failed: 0, unknown: 0 };
  private flushing: Promise<void> | undefined;
  constructor(
    private readonly db: Db,
    private readonly replayId: string,
  ) {}

  /** Writes the item's outcome (recordItemOutcome) and counts it. */
  async record(itemId: string, outcome: ItemOutcome, note: string): Promise<void> {
    this.add(outcome, await recordItemOutcome(this.db, itemId, outcome, note));
  }

  /** Counts an outcome written elsewhere; `was`: what it replaced, null when nothing was written. */
  add(outcome: ItemOutcome, was: string | null | undefined) {
    if (was === null || was === undefined) return; // nothing written (decided meanwhile)
    observeReplayItem(outcome);
    const c = outcomeCounts(outcome);
    this.d.sent += c.sent;
    this.d.skipped += c.skipped;
    this.d.failed += c.failed;
    this.d.unknown += c.unknown - (was === 'interrupted' ? 1 : 0);
  }

  /** Writes every count added before this call. Flushes run one after another: a call made while one
   *  is writing waits for it and then writes what was added meanwhile (returning the running flush
   *  instead lost those counts on a cancelled replay, which is never recounted). */
  flush(): Promise<void> {
    const write = async (): Promise<void> => {
      const d = this.d;
      if (!d.sent && !d.skipped && !d.failed && !d.unknown) return;
      this.d = { sent: 0, skipped: 0, failed: 0, unknown: 0 };
      try {
        const added = await sqlRows(
          this.db,
          `UPDATE replay SET sent = sent + $2, skipped = skipped + $3, failed = failed + $4, unknown = unknown + $5
            WHERE id = $1::uuid AND status <> 'completed' RETURNING id`,
          [this.replayId, d.sent, d.skipped, d.failed, d.unknown],
        );
        // A completed replay's counters are a recount of its items, which may or may not hold these
        // outcomes already (a batch queued behind another can land after the completion): count again.
        if (added.length === 0) await sqlRows(this.db, RECOUNT_COMPLETED_SQL, [this.replayId]);
      } catch (error) {
        for (const k of ['sent', 'skipped', 'failed', 'unknown'] as const) this.d[k] += d[k]; // next time
        throw error;
      }
    };
    const next = (this.flushing ?? Promise.resolve()).catch(() => {}).then(write);
    const tracked: Promise<void> = next.finally(() => {
      if (this.flushing === tracked) this.flushing = undefined;
    });
    this.flushing = tracked;
    tracked.catch(() => {}); // the caller handles the error of its own flush
    return next;
  }
}
