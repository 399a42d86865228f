// Failed runtime-key authentications are limited per source address: after MAX failures within the
// window, that source gets 429 with Retry-After (no key is checked and nothing is audited) until its
// failures age out. The point is to keep a flood of bad or missing keys from writing an audit entry
// per request and from using the database at all; keys are long random secrets, so guessing is not
// the threat. Counted per process, on purpose: behind a load balancer with N web processes a source may
// fail up to N x MAX times per window before every process refuses it, so what a flood can cost is
// bounded by N x MAX audited refusals per minute whatever its size, and a restarted process forgets at
// most MAX more. A count held in PostgreSQL would be global, but it would cost a write per failed request
// and a read per request from a limited source: the very load on the database this limit keeps away
// (docs/DEPLOYMENT.md; tests/integration/ops-scale-out.test.ts shows N x MAX with two processes). A
// request without a source address (an in-process caller; the production server always sets one) is
// not limited.
export const DOOR_WINDOW_MS = 60_000;
export const DOOR_MAX_FAILURES = 20;
const MAX_SOURCES = 10_000; // bounded memory under a flood from many addresses

const failures = new Map<string, number[]>();

function recent(source: string, now: number): number[] {
  const times = (failures.get(source) ?? []).filter((t) => now - t < DOOR_WINDOW_MS);
  if (times.length) failures.set(source, times);
  else failures.delete(source);
  return times;
}

/** Seconds until this source may try again, or 0 when it may try now. */
export function doorRetryAfter(source: string | null | undefined, now = Date.now()): number {
  if (!source) return 0;
  const times = recent(source, now);
  if (times.length < DOOR_MAX_FAILURES) return 0;
  return Math.max(1, Math.ceil((times[times.length - DOOR_MAX_FAILURES]! + DOOR_WINDOW_MS - now) / 1000));
}

export function noteDoorFailure(source: string | null | undefined, now = Date.now()): void {
  if (!source) return;
  const key = source;
  if (!failures.has(key) && failures.size >= MAX_SOURCES) {
    // Forget the oldest source (Map keeps insertion order) rather than grow without bound.
    failures.delete(failures.keys().next().value!);
  }
  const times = recent(key, now);
  times.push(now);
  failures.set(key, times.slice(-DOOR_MAX_FAILURES));
}
