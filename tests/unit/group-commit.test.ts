// How group commit (lib/db/group-commit.ts) cuts waiting work into batches: spread over the free
// slots so batches run side by side, never cut below minBatch, never above maxBatch, and a lone item
// runs on its own. The claim path's S1 guarantees on top of it are in tests/integration/claim-batch.test.ts.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '@/lib/db/group-commit.ts';

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A GroupCommit whose batches stay open until the test releases them, recording each batch. */
function recorder(o: { maxInFlight: number; minBatch: number; maxBatch: number }) {
  const batches: number[][] = [];
  const singles: number[] = [];
  const release = gate();
  let started = gate();
  const group = new GroupCommit<number, number>({
    ...o,
    runBatch: async (items) => {
      batches.push(items);
      started.open();
      await release.promise;
      return items.map((i) => i * 10);
    },
    runOne: async (item) => {
      singles.push(item);
      started.open();
      await release.promise;
      return item * 10;
    },
  });
  return {
    group,
    batches,
    singles,
    release: release.open,
    /** Resolves once the next batch (or single item) has started. */
    nextStart() {
      const s = started;
      return s.promise.then(() => void (started = gate()));
    },
  };
}

const submitAll = (group: GroupCommit<number, number>, n: number) =>
  Array.from({ length: n }, (_, i) => group.submit(i + 1));

describe('group commit: how waiting items become batches', () => {
  it('16 items submitted together with 4 free slots and minBatch 8 run as two batches of 8, side by side', async () => {
    const r = recorder({ maxInFlight: 4, minBatch: 8, maxBatch: 64 });
    const answers = submitAll(r.group, 16);
    await r.nextStart();
    // Both batches are running before either finishes.
    expect(r.batches.map((b) => b.length)).toEqual([8, 8]);
    r.release();
    expect(await Promise.all(answers)).toEqual(Array.from({ length: 16 }, (_, i) => (i + 1) * 10));
    expect(r.batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  });

  it('40 items are spread over the 4 free slots (10 each); 300 items are capped at maxBatch', async () => {
    const a = recorder({ maxInFlight: 4, minBatch: 8, maxBatch: 64 });
    const forty = submitAll(a.group, 40);
    await a.nextStart();
    expect(a.batches.map((b) => b.length)).toEqual([10, 10, 10, 10]);
    a.release();
    await Promise.all(forty);

    const b = recorder({ maxInFlight: 4, minBatch: 8, maxBatch: 64 });
    const many = submitAll(b.group, 300);
    await b.nextStart();
    expect(b.batches.map((x) => x.length)).toEqual([64, 64, 64, 64]);
    b.release();
    expect(await Promise.all(many)).toHaveLength(300);
    // The 44 left over went out as the first batches finished.
    expect(b.batches.flat()).toHaveLength(300);
  });

  it('fewer items than minBatch stay one batch; a lone item runs on its own', async () => {
    const r = recorder({ maxInFlight: 4, minBatch: 8, maxBatch: 64 });
    const three = submitAll(r.group, 3);
    await r.nextStart();
    expect(r.batches.map((b) => b.length)).toEqual([3]);
    r.release();
    await Promise.all(three);

    const one = recorder({ maxInFlight: 4, minBatch: 8, maxBatch: 64 });
    const alone = one.group.submit(7);
    await one.nextStart();
    one.release();
    expect(await alone).toBe(70);
    expect(one.batches).toEqual([]);
    expect(one.singles).toEqual([7]);
  });

  it('a batch the server refuses is re-run item by item, so only the faulty item fails', async () => {
    const group = new GroupCommit<number, number>({
      maxInFlight: 1,
      minBatch: 1,
      maxBatch: 64,
      runBatch: async () => {
        throw new pg.DatabaseError('deadlock detected', 0, 'error');
      },
      runOne: async (item) => {
        if (item === 2) throw new Error('item 2 is bad');
        return item;
      },
    });
    const results = await Promise.allSettled(submitAll(group, 3));
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
