// A large run's figure is first computed exactly (before the run is known to be large), then read
// through remember() under another key. Seeding that key with the exact figure keeps the next views
// from waiting for a second pass over the run: on a million-item run that pass stalled every view of
// the replay page for over ten seconds after a start (docs/BENCHMARKS.md, operator pages).
import { describe, expect, it } from 'vitest';
import { remember, seedRemembered } from '@/lib/read-models/common.ts';

/** A computation the test finishes when it wants, counting its calls. */
function controlled<T>() {
  let finish!: (value: T) => void;
  let calls = 0;
  const compute = () => {
    calls++;
    return new Promise<T>((resolve) => (finish = resolve));
  };
  return { compute, finish: (value: T) => finish(value), calls: () => calls };
}

describe('seedRemembered', () => {
  it('answers the next view from the seeded figure, without computing it again', async () => {
    const key = `seed-test:${Math.random()}`;
    seedRemembered(key, 41);
    const pass = controlled<number>();
    // The pass never finishes here: a view that waited for it would never return.
    expect((await remember(key, 60_000, pass.compute)).value).toBe(41);
    expect(pass.calls()).toBe(0);
  });

  it('does not replace a figure remember() already holds', async () => {
    const key = `seed-test:${Math.random()}`;
    await remember(key, 60_000, async () => 1);
    seedRemembered(key, 2);
    expect((await remember(key, 60_000, async () => 3)).value).toBe(1);
  });

  it('is refreshed behind the views once expired: the views keep the seeded figure meanwhile', async () => {
    const key = `seed-test:${Math.random()}`;
    seedRemembered(key, 'exact');
    const pass = controlled<string>();
    // Expired at once (ttl 0) and carrying no mark: the refresh runs the pass, in the background.
    expect((await remember(key, 0, pass.compute)).value).toBe('exact');
    expect(pass.calls()).toBe(1);
    pass.finish('refreshed');
    await new Promise((resolve) => setImmediate(resolve)); // the refresh's own promise callbacks
    expect((await remember(key, 60_000, pass.compute)).value).toBe('refreshed');
    expect(pass.calls()).toBe(1);
  });
});
