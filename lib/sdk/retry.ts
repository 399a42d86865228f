// When the HTTP transport tries a request again, and how long it waits first. Only answers that say
// "nothing happened, come back" are retried (429, 502, 503, 504, and our own earlier attempt still
// running: 409 in_progress), plus requests that got no answer at all; every POST keeps its
// Idempotency-Key across attempts, so a retry can never claim or report twice (Z5).

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number;
  /** Full jitter: attempt n (0 = the first retry) waits a random time in [0, min(max, base * 2^n)). */
  baseDelayMs: number;
  /** No single wait is longer. A Retry-After beyond it ends the retries: the error goes to the caller. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

/** Statuses that mean the server (or a proxy in front of it) did not do the work and asks to come back. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

export function isRetryableAnswer(status: number, body: unknown): boolean {
  return RETRY_STATUSES.has(status) || isInProgress(status, body);
}

/** Our own earlier attempt (whose answer was lost) is still running on the server: wait for it. */
export function isInProgress(status: number, body: unknown): boolean {
  return status === 409 && (body as { idempotency?: unknown } | null)?.idempotency === 'in_progress';
}

/**
 * How long a request keeps asking while the server says its earlier attempt is still running. That
 * attempt may still commit (a claim won, an outcome recorded), and only the same Idempotency-Key gets
 * its answer; giving up after the usual few retries would leave a claim nobody knows it holds. The
 * server takes over a record whose request died after 120 s, so the default waits a little longer.
 */
export const IN_PROGRESS_WAIT_MS = 130_000;

export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Retry-After (RFC 9110: delay-seconds or an HTTP date) as milliseconds from now; null when absent
 *  or malformed, so the exponential backoff applies instead. A date in the past is 0. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names a weekday; this keeps bare numbers like "1.5" from parsing as dates.
  if (!/^[A-Za-z]{3}/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Waits, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
