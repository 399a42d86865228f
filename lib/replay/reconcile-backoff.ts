// Keys whose reconciliation failed (a lookup error, C3) go to the back of the reconciler's queue for
// a while, in this process only: a pass takes the other expired keys first and comes back to these
// only with room left, soonest first. Without it a pass took the oldest expired keys in lease order,
// so a block of keys that keep failing (a provider down) was taken again every pass and no key behind
// it was ever looked at. Nothing is stored: a restarted worker starts with an empty list, which only
// costs each failing key one more lookup.
import type { ProviderRegistry } from '../providers/registry.ts';

/** First wait after an error; doubled per error in a row, at most MAX_MS. */
const FIRST_MS = 30_000;
const MAX_MS = 15 * 60_000;
/** Bounded memory: past this, a failing key is not remembered and keeps its place in lease order. */
const MAX_KEYS = 10_000;

interface Entry {
  until: number;
  errors: number;
}

export class ReconcileBackoff {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A failed reconciliation of `key`: it yields to every other key until its wait is over. */
  failed(key: string): void {
    const at = this.now();
    const previous = this.entries.get(key);
    if (!previous && this.entries.size >= MAX_KEYS) this.prune(at);
    if (!previous && this.entries.size >= MAX_KEYS) return;
    const errors = (previous?.errors ?? 0) + 1;
    this.entries.set(key, { until: at + Math.min(MAX_MS, FIRST_MS * 2 ** (errors - 1)), errors });
  }

  /** A decision (or a miss inside the settle window): the key is back in line. */
  settled(key: string): void {
    this.entries.delete(key);
  }

  /** Keys still waiting, soonest end of wait first. */
  waiting(): string[] {
    const at = this.now();
    return [...this.entries]
      .filter(([, e]) => e.until > at)
      .sort((a, b) => a[1].until - b[1].until)
      .map(([key]) => key);
  }

  private prune(at: number): void {
    for (const [key, e] of this.entries) if (e.until <= at) this.entries.delete(key);
  }
}

// One list per provider registry, so the worker (which passes the same registry on every pass) keeps
// its list across passes without holding it itself, and a caller with its own registry starts clean.
const lists = new WeakMap<ProviderRegistry, ReconcileBackoff>();

export function backoffFor(providers: ProviderRegistry): ReconcileBackoff {
  let list = lists.get(providers);
  if (!list) lists.set(providers, (list = new ReconcileBackoff()));
  return list;
}
