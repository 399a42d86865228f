// Step 3 of an item, once the provider answered: the raw response stored before anything parses it
// (R1), then the key moved by what the answer means: done with the receipt (S2), failed or stuck with
// the response as evidence (S3, S6), an "already existed" pointer followed (R3), anything ambiguous
// left pending for the reconciler (S4: the executor may not decide unknown). Each move is the
// ledger's transition with the item's outcome in the same statement, retried through a database
// outage: the send already happened, and its answer exists only in this process.
import {
  completeEffect,
  LedgerError,
  recordResponse,
  transitionEffect,
  type RawResponseRecord,
} from '../ledger/index.ts';
import type { RegisteredProvider } from '../providers/registry.ts';
import type { RawResponse } from '../providers/types.ts';
import { RetryChunk, type ItemContext } from './executor.ts';
import { outcomeAlongside, type ItemOutcome } from './item-outcome.ts';
import { persistThroughOutage } from './persist-through-outage.ts';
import { span } from './step-trace.ts';

const TRANSITION_ACTIONS = { done: 'effect.complete', failed: 'effect.fail', stuck: 'effect.mark_stuck' } as const;

/** The claim an item was sent on. */
export interface SentItem {
  itemId: string;
  key: string;
  epoch: number;
  attemptId: string;
}

/** pending -> done / failed / stuck for the executor, with the raw response (R1) and the item's
 *  outcome (null: none yet) in the same statement, retried through a database outage. */
export function settle(
  c: ItemContext,
  s: SentItem,
  t: {
    to: 'done' | 'failed' | 'stuck';
    receipt?: string;
    evidence?: Record<string, unknown>;
    raw?: RawResponseRecord;
  },
  o: { outcome: ItemOutcome; note: string } | null,
): Promise<void> {
  const alongside = o ? outcomeAlongside(s.itemId, o.outcome, o.note) : undefined;
  let tries = 0;
  return persistThroughOutage(
    `outcome of ${s.key}`,
    async () => {
      const r = await transitionEffect(
        { db: c.deps.db, actor: c.actor },
        {
          key: s.key,
          epoch: s.epoch,
          to: t.to,
          action: TRANSITION_ACTIONS[t.to],
          receipt: t.receipt,
          evidence: t.evidence,
          attemptId: s.attemptId,
          response: t.raw,
          repeat: tries++ > 0,
        },
        alongside,
      );
      if (o) c.tally.add(o.outcome, r.alongside as string | null);
    },
    c.deps.log,
  );
}

export async function settleVerdict(
  c: ItemContext,
  s: SentItem,
  provider: RegisteredProvider,
  providerName: string,
  raw: RawResponse,
): Promise<void> {
  const { deps, actor, tally } = c;
  const t0 = performance.now();
  const verdict = provider.classify(raw);
  // R1: done, failed and stuck store the raw response in their own statement (below); the other
  // verdicts store it here, before anything else happens to the key.
  if (verdict.outcome !== 'done' && verdict.outcome !== 'failed' && verdict.outcome !== 'stuck') {
    await persistThroughOutage(
      `response of ${s.key}`,
      () =>
        recordResponse(
          { db: deps.db, actor },
          { attemptId: s.attemptId, status: raw.status, headers: raw.headers, body: raw.body },
          { keepEarlier: true },
        ),
      deps.log,
    );
  }
  try {
    switch (verdict.outcome) {
      case 'done':
        await settle(
          c,
          s,
          { to: 'done', receipt: verdict.receipt, raw },
          { outcome: 'sent', note: `receipt ${verdict.receipt}` },
        );
        return span('done', t0);
      case 'failed':
        if (verdict.evidence.unavailable === true) {
          await settle(c, s, { to: 'failed', evidence: verdict.evidence, raw }, null);
          throw new RetryChunk(`provider ${providerName} unavailable (${raw.status})`);
        }
        return await settle(
          c,
          s,
          { to: 'failed', evidence: verdict.evidence, raw },
          { outcome: 'failed', note: `rejected: ${JSON.stringify(verdict.evidence).slice(0, 500)}` },
        );
      case 'stuck':
        return await settle(
          c,
          s,
          { to: 'stuck', evidence: verdict.evidence, raw },
          { outcome: 'failed', note: 'stuck (S6)' },
        );
      case 'already_existed': {
        // R3: follow the pointer and record the prior object's state.
        const prior = provider.followReference
          ? await provider.followReference(verdict.reference).catch(() => null)
          : null;
        // Only a prior object delivered or accepted completes the key: a provider's own client may
        // report a state the type does not name (a bounce), and that must not read as a receipt (S2).
        if (prior?.found && (prior.state === 'delivered' || prior.state === 'accepted')) {
          // The receipt comes from the prior object; the pointer is kept as the transition's evidence.
          await completeEffect(
            { db: deps.db, actor },
            {
              key: s.key,
              epoch: s.epoch,
              receipt: prior.receipt,
              attemptId: s.attemptId,
              evidence: { ...verdict.evidence, reference: verdict.reference },
            },
          );
          return await tally.record(s.itemId, 'sent', `already existed: receipt ${prior.receipt}`);
        }
        if (prior?.found && prior.state === 'failed') {
          return await settle(
            c,
            s,
            {
              to: 'stuck',
              evidence: { ...verdict.evidence, reference: verdict.reference, prior: 'failed' },
              raw,
            },
            { outcome: 'failed', note: 'already existed as a failed object: stuck (R3, S6)' },
          );
        }
        return await tally.record(
          s.itemId,
          'unknown',
          `already existed at ${verdict.reference}; the prior object could not be read or is in no final state, left pending for the reconciler`,
        );
      }
      case 'unknown':
        return await tally.record(
          s.itemId,
          'unknown',
          `ambiguous response ${raw.status}, left pending for the reconciler`,
        );
      default:
        return verdict satisfies never;
    }
  } catch (error) {
    // The reconciler may have moved a slow send on (its lease expired): its decision stands.
    if (error instanceof LedgerError && error.code === 'invalid_transition') {
      return await tally.record(s.itemId, 'unknown', `${error.message} (decided by the reconciler meanwhile)`);
    }
    throw error;
  }
}
