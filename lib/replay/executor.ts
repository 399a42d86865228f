// The replay executor: one chunk job = a range of frozen replay items. For each item:
//   1. re-read the target's state; one that changed since confirmation is skipped and reported (F4),
//   2. wait for the provider's rate limit, then claim through the ledger like the runtime does (F3):
//      a lost claim sends nothing,
//   3. send with the (key, epoch) idempotency key (R2), store the raw response before parsing (R1),
//      then done with the receipt (S2), failed or stuck with the response as evidence (S3, S6).
// A call that provably sent nothing (connection refused) frees the key as failed and fails the job,
// which pg-boss retries: the replay stops and retries cleanly. An ambiguous call (timeout after the
// data went out, 5xx) stays pending for the reconciler, never retried (S4).
//
// run-chunk.ts runs a chunk: item-window.ts reads its items, outcome-without-send.ts settles those
// that need no send (step 1), send-item.ts claims and sends (steps 2 and 3), settle-verdict.ts moves
// the key by the provider's answer, item-outcome.ts records each item's outcome, outcome-tally.ts adds
// them to the replay's counters, complete-replay.ts completes the replay after its last item.
// Every state change goes through the ledger's commands (lib/ledger).
import type { Db } from '../db/client.ts';
import type { Actor } from '../ledger/index.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Tally } from './outcome-tally.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface ExecutorDeps {
  db: Db;
  providers: ProviderRegistry;
  limiter?: RateLimiter;
  /** Items of one chunk sent at the same time (each still claims on its own). */
  itemConcurrency?: number;
  /** Content of a replayed message; defaults to a neutral text naming the action and record. */
  payload?: (item: { tool: string; action: string; recordId: string; target: string }) => Record<string, unknown>;
  log?: (line: string) => void;
}

/** What a handler knows while it works on one item of a chunk. */
export interface ItemContext {
  deps: ExecutorDeps;
  tally: Tally;
  replayId: string;
  runId: string;
  actor: Actor;
}

export function executorActor(replayId: string): Actor {
  return { kind: 'executor', id: `replay:${replayId}`, label: `replay executor ${replayId}` };
}

/** Thrown to fail the chunk job so pg-boss retries it later (the provider is unreachable). */
export class RetryChunk extends Error {}
