// Group commit: work items submitted at the same moment run as one batch (one statement, one
// transaction, one commit) instead of one transaction each. A commit waits for its WAL flush, so
// sharing it is the cheapest way to raise a write path's throughput without weakening durability.
//
// Batching adds no waiting: items go out at the end of the current event-loop turn if a batch slot is
// free, and items that arrive while every slot is busy ride in the next batch together. A lone caller
// pays one round trip, as before; under load the batches grow by themselves (up to maxBatch).
//
// Waiting items are spread over the free slots, so batches run side by side on several server
// processes instead of one large batch keeping one CPU busy while the others idle (measured: 16
// waiting claims as one batch left half of a 2-core machine idle). A batch is not cut below
// minBatch items, because each batch also pays a fixed cost (one statement, one commit).
import pg from 'pg';

export interface GroupCommitOptions<I, O> {
  /** Batches running at once (each holds one pooled connection while it runs). */
  maxInFlight: number;
  /** The most items one transaction carries: bounds how long its row locks are held. */
  maxBatch: number;
  /** The fewest items a batch is cut to when waiting items are spread over free slots. */
  minBatch: number;
  /** Runs a batch of two or more items in one transaction; one answer per item, in item order. */
  runBatch(items: I[]): Promise<O[]>;
  /** Runs one item on its own. */
  runOne(item: I): Promise<O>;
}

interface Waiting<I, O> {
  item: I;
  resolve(answer: O): void;
  reject(error: unknown): void;
}

export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly o: GroupCommitOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.o.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // End of this turn: every item submitted in the same turn (a burst of requests, the callers a
    // finished batch just answered) joins the same batch.
    setImmediate(() => {
      this.scheduled = false;
      const free = this.o.maxInFlight - this.inFlight;
      const size = Math.min(this.o.maxBatch, Math.max(this.o.minBatch, Math.ceil(this.queue.length / free)));
      while (this.inFlight < this.o.maxInFlight && this.queue.length > 0) {
        const batch = this.queue.splice(0, size);
        this.inFlight++;
        void this.run(batch).finally(() => {
          this.inFlight--;
          this.schedule();
        });
      }
    });
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    if (batch.length === 1) return this.runAlone(batch[0]!);
    let answers: O[];
    try {
      answers = await this.o.runBatch(batch.map((w) => w.item));
    } catch (e) {
      // The server refused the batch and rolled all of it back (a deadlock with another writer, one
      // item breaking a constraint): nothing committed, so each item goes again on its own and only
      // the item at fault fails. A lost connection is different: the commit may have landed, so every
      // caller gets the error, exactly as the caller of a single-item transaction would.
      if (e instanceof pg.DatabaseError) await Promise.all(batch.map((w) => this.runAlone(w)));
      else for (const w of batch) w.reject(e);
      return;
    }
    if (answers.length !== batch.length) {
      const lost = new Error(`a batch of ${batch.length} returned ${answers.length} answers`);
      for (const w of batch) w.reject(lost);
      return;
    }
    batch.forEach((w, i) => w.resolve(answers[i]!));
  }

  private runAlone(w: Waiting<I, O>): Promise<void> {
    return this.o.runOne(w.item).then(w.resolve, w.reject);
  }
}
