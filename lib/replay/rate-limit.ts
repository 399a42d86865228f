// Per-provider rate limit for the executor: a token bucket per provider name in this process. Each
// worker process holds its own buckets, so with N worker processes configure rateLimitPerSecond as
// the provider's limit divided by N (see docs/REPLAY.md).
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number; chain: Promise<void> }>();

  constructor(private readonly limitOf: (provider: string) => number | undefined) {}

  /** Resolves when a send to `provider` may start. Callers queue in order. */
  acquire(provider: string): Promise<void> {
    const rate = this.limitOf(provider);
    if (!rate) return Promise.resolve();
    let b = this.buckets.get(provider);
    if (!b) {
      b = { tokens: Math.max(1, rate), at: Date.now(), chain: Promise.resolve() };
      this.buckets.set(provider, b);
    }
    const bucket = b;
    const next = bucket.chain.then(async () => {
      for (;;) {
        const now = Date.now();
        bucket.tokens = Math.min(Math.max(1, rate), bucket.tokens + ((now - bucket.at) / 1000) * rate);
        bucket.at = now;
        if (bucket.tokens >= 1) {
          bucket.tokens -= 1;
          return;
        }
        await new Promise((r) => setTimeout(r, Math.ceil(((1 - bucket.tokens) / rate) * 1000)));
      }
    });
    bucket.chain = next;
    return next;
  }
}
