// Every decision a person takes on runs, plans, effects and replays, from the console or the management API
// (the settings an admin changes are in ./admin-decisions.ts):
// one Decision per action (lib/auth/decision.ts), naming its permission, input schema, subject, the
// version it must carry (Z8) and the lib command that changes and audits. app/actions and
// lib/manage/endpoints.ts run these same objects, so neither door can drift from the other.
import { z } from 'zod';
import { decideBump, decideInput } from '../approvals/decide-bump.ts';
import { requestBump, requestBumpInput } from '../approvals/request-bump.ts';
import type { Decision } from '../auth/decision.ts';
import { effectsSubject, type Guarded } from '../auth/guard.ts';
import { effectKeyField, effectKeysField, reasonField } from '../ledger/fields.ts';
import {
  approvePlan,
  approvePlanInput,
  LedgerError,
  rejectPlan,
  rejectPlanInput,
  resolveUnknown,
  resolveUnknownInput,
  revokeEffect,
  seenEffectField,
} from '../ledger/index.ts';
import { seenField, seenFields, seenPerKey } from '../ledger/seen-required.ts';
import {
  approveReplay,
  approveReplayInput,
  cancelReplay,
  cancelReplayInput,
  getReplayProgress,
  pauseReplay,
  rejectReplay,
  rejectReplayInput,
  replayControlInput,
  requestReplay,
  requestReplayInput,
  resumeReplay,
  startReplay,
} from '../replay/index.ts';

/** A Decision with its input and result types inferred. */
export const decision = <S extends z.ZodType, T>(d: Decision<S, T>): Decision<S, T> => d;

// Plans (P1, P2)
export const approvePlanDecision = decision({
  permission: 'plan.approve',
  schema: approvePlanInput,
  run: (g, i) => approvePlan(g, i),
  subject: (i) => ({ type: 'plan', id: i.planId }),
  seen: seenField('seenStatus', "plan's status"),
});
export const rejectPlanDecision = decision({
  permission: 'plan.approve',
  schema: rejectPlanInput,
  run: (g, i) => rejectPlan(g, i),
  subject: (i) => ({ type: 'plan', id: i.planId }),
  seen: seenFields(seenField('seenStatus', "plan's status"), seenField('itemsHash', "plan's items hash")),
});

/** Z8: per key, the version the page showed (required for every key, seenPerKey); a key that changed
 *  since is refused on its own. */
const seenOfKeys = z.record(effectKeyField, seenEffectField).optional();

/** Runs one command per key: each key is its own transition with its own audit entry. With one key
 *  the refusal is the answer; with several, the refused keys are listed beside the count done. */
async function perKey(keys: readonly string[], each: (key: string) => Promise<unknown>) {
  let done = 0;
  const failed: { key: string; error: string }[] = [];
  for (const key of keys) {
    try {
      await each(key);
      done++;
    } catch (error) {
      if (!(error instanceof LedgerError) || keys.length === 1) throw error;
      failed.push({ key, error: error.message });
    }
  }
  return { done, failed };
}

// Effects (V, E)
export const revokeEffectsDecision = decision({
  permission: 'effect.revoke',
  schema: z.strictObject({ keys: effectKeysField, reason: reasonField, seen: seenOfKeys }),
  run: async (g: Guarded, i) => {
    const { done, failed } = await perKey(i.keys, (key) =>
      revokeEffect(g, { key, reason: i.reason, seen: i.seen?.[key] }),
    );
    return { revoked: done, failed };
  },
  subject: (i) => effectsSubject(i.keys),
  seen: seenPerKey,
});

export const resolveUnknownDecision = decision({
  permission: 'effect.resolve',
  schema: resolveUnknownInput,
  run: (g, i) => resolveUnknown(g, i),
  subject: (i) => ({ type: 'effect', id: i.key }),
  seen: seenField('seen', "key's version (epoch, state, changedAt)"),
});

// Bulk resolve from the support queue: "sent" in bulk carries one evidence reference for all.
export const resolveManyDecision = decision({
  permission: 'effect.resolve',
  schema: z.discriminatedUnion('outcome', [
    z.strictObject({
      keys: effectKeysField,
      outcome: z.literal('sent'),
      reason: reasonField,
      receipt: z.string().trim().min(1, 'give the evidence reference that covers every selected key').max(1024),
      seen: seenOfKeys,
    }),
    z.strictObject({ keys: effectKeysField, outcome: z.literal('not_sent'), reason: reasonField, seen: seenOfKeys }),
  ]),
  run: async (g: Guarded, i) => {
    const { done, failed } = await perKey(i.keys, (key) =>
      resolveUnknown(
        g,
        i.outcome === 'sent'
          ? { key, outcome: 'sent', reason: i.reason, receipt: i.receipt, seen: i.seen?.[key] }
          : { key, outcome: 'not_sent', reason: i.reason, seen: i.seen?.[key] },
      ),
    );
    return { resolved: done, failed };
  },
  subject: (i) => effectsSubject(i.keys),
  seen: seenPerKey,
});

export const requestBumpDecision = decision({
  permission: 'effect.bump.request',
  schema: requestBumpInput,
  run: (g, i) => requestBump(g, i),
  subject: (i) => effectsSubject(i.keys),
  seen: seenPerKey,
});
export const decideBumpDecision = decision({
  permission: 'effect.bump.approve',
  schema: decideInput,
  run: (g, i) => decideBump(g, i),
  subject: (i) => ({ type: 'approval', id: i.requestId }),
  seen: seenField('seenStatus', "request's status"),
});

// Forced replays (F1-F5, Z3)
export const requestReplayDecision = decision({
  permission: 'replay.request',
  schema: requestReplayInput,
  run: (g, i) => requestReplay(g, i),
  subject: (i) => ({ type: 'run', id: i.runId, runId: i.runId }),
  seen: seenField('setHash', "set's hash from the preview"),
});
export const approveReplayDecision = decision({
  permission: 'replay.approve',
  schema: approveReplayInput,
  run: (g, i) => approveReplay(g, i),
  subject: (i) => ({ type: 'approval', id: i.approvalRequestId }),
  seen: seenField('seenStatus', "request's status"),
});
export const rejectReplayDecision = decision({
  permission: 'replay.approve',
  schema: rejectReplayInput,
  run: (g, i) => rejectReplay(g, i),
  subject: (i) => ({ type: 'approval', id: i.approvalRequestId }),
  seen: seenField('seenStatus', "request's status"),
});
const replayControl = <T>(run: Decision<typeof replayControlInput, T>['run']) =>
  decision({
    permission: 'replay.control',
    schema: replayControlInput,
    run,
    subject: (i) => ({ type: 'replay', id: i.replayId }),
    seen: seenField('seenStatus', "replay's status"),
  });
export const startReplayDecision = replayControl((g, i) => startReplay(g, i));
export const pauseReplayDecision = replayControl((g, i) => pauseReplay(g, i));
export const resumeReplayDecision = replayControl((g, i) => resumeReplay(g, i));
export const cancelReplayDecision = decision({
  permission: 'replay.control',
  schema: cancelReplayInput,
  run: async (g, i) => {
    const result = await cancelReplay(g, i);
    return { ...result, progress: await getReplayProgress(g, { replayId: i.replayId }) };
  },
  subject: (i) => ({ type: 'replay', id: i.replayId }),
  seen: seenField('seenStatus', "replay's status"),
});
