// The memo behind the console's "as of" figures on very large runs (P4, per-state counts, the audit
// page's verification): concurrent views share one computation, and an expired figure is served
// while one refresh runs, so a million-item run is scanned once per period, not once per view.
import { describe, expect, it } from 'vitest';
import { remember } from '@/lib/read-models/common.ts';

function gate<T>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe('remember (P4 figures on large runs)', () => {
  it('runs one computation for many concurrent first views', async () => {
    let calls = 0;
    const g = gate<number>();
    const views = Array.from({ length: 20 }, () => remember('t:single-flight', 60_000, () => (calls++, g.promise)));
    g.open(42);
    const results = await Promise.all(views);
    expect(calls).toBe(1);
    expect(new Set(results.map((r) => r.value))).toEqual(new Set([42]));
  });

  it('serves the expired figure with its own "as of" while one refresh runs, then the new one', async () => {
    const first = await remember('t:stale', 0, async () => 1);
    let calls = 0;
    const g = gate<number>();
    const stale = await Promise.all(
      Array.from({ length: 5 }, () => remember('t:stale', 0, () => (calls++, g.promise))),
    );
    expect(stale.map((r) => r.value)).toEqual([1, 1, 1, 1, 1]);
    expect(stale.every((r) => r.at.getTime() === first.at.getTime())).toBe(true);
    expect(calls).toBe(1);
    g.open(2);
    await g.promise;
    await Promise.resolve();
    const fresh = await remember('t:stale', 60_000, async () => 3);
    expect(fresh.value).toBe(2);
  });

  it('a failed computation is not remembered: the next view computes again', async () => {
    await expect(
      remember('t:fail', 60_000, async () => {
        throw new Error('database gone');
      }),
    ).rejects.toThrow('database gone');
    expect((await remember('t:fail', 60_000, async () => 7)).value).toBe(7);
  });
});
