'use server';
// Server actions for the ledger decisions. Each one: parse with the command's schema, authorize on
// the server with the permission table (lib/auth/guard.ts), delegate to the lib command, which
// audits in the same transaction as the change. Bulk actions run the same command per key.
import { z } from 'zod';
import { decideBump, decideInput } from '@/lib/approvals/decide-bump.ts';
import { requestBump, requestBumpInput } from '@/lib/approvals/request-bump.ts';
import { consoleAction, effectsSubject } from '@/lib/auth/guard.ts';
import {
  approvePlan,
  approvePlanInput,
  rejectPlan,
  rejectPlanInput,
  LedgerError,
  resolveUnknown,
  resolveUnknownInput,
  revokeEffect,
  seenEffectField,
} from '@/lib/ledger/index.ts';
import { effectKeyField, effectKeysField, reasonField } from '@/lib/ledger/fields.ts';
import { seenField, seenFields, seenPerKey } from '@/lib/ledger/seen-required.ts';

export async function rejectPlanAction(input: unknown) {
  return consoleAction(
    'plan.approve',
    rejectPlanInput,
    input,
    (g, i) => rejectPlan(g, i),
    (i) => ({ type: 'plan', id: i.planId }),
    { seen: seenFields(seenField('seenStatus', "plan's status"), seenField('itemsHash', "plan's items hash")) },
  );
}

export async function approvePlanAction(input: unknown) {
  return consoleAction(
    'plan.approve',
    approvePlanInput,
    input,
    (g, i) => approvePlan(g, i),
    (i) => ({ type: 'plan', id: i.planId }),
    { seen: seenField('seenStatus', "plan's status") },
  );
}

/** Z8: per key, the version the page showed (required for every key, seenPerKey below); a key that
 *  changed since is refused on its own. */
const seenOfKeys = z.record(effectKeyField, seenEffectField).optional();

const revokeManyInput = z.strictObject({
  keys: effectKeysField,
  reason: reasonField,
  seen: seenOfKeys,
});

export async function revokeAction(input: unknown) {
  return consoleAction(
    'effect.revoke',
    revokeManyInput,
    input,
    async (g, i) => {
      let revoked = 0;
      const failed: { key: string; error: string }[] = [];
      for (const key of i.keys) {
        try {
          await revokeEffect(g, { key, reason: i.reason, seen: i.seen?.[key] });
          revoked++;
        } catch (error) {
          if (!(error instanceof LedgerError) || i.keys.length === 1) throw error;
          failed.push({ key, error: error.message });
        }
      }
      return { revoked, failed };
    },
    (i) => effectsSubject(i.keys),
    { seen: seenPerKey },
  );
}

export async function resolveUnknownAction(input: unknown) {
  return consoleAction(
    'effect.resolve',
    resolveUnknownInput,
    input,
    (g, i) => resolveUnknown(g, i),
    (i) => ({ type: 'effect', id: i.key }),
    { seen: seenField('seen', "key's version (epoch, state, changedAt)") },
  );
}

// Bulk resolve from the support queue: the same command per key, so each key is its own transition
// with its own audit entry; "sent" in bulk carries one evidence reference for all (a provider log export).
const resolveManyInput = z.discriminatedUnion('outcome', [
  z.strictObject({
    keys: effectKeysField,
    outcome: z.literal('sent'),
    reason: reasonField,
    receipt: z.string().trim().min(1, 'give the evidence reference that covers every selected key').max(1024),
    seen: seenOfKeys,
  }),
  z.strictObject({ keys: effectKeysField, outcome: z.literal('not_sent'), reason: reasonField, seen: seenOfKeys }),
]);

export async function resolveManyAction(input: unknown) {
  return consoleAction(
    'effect.resolve',
    resolveManyInput,
    input,
    async (g, i) => {
      let resolved = 0;
      const failed: { key: string; error: string }[] = [];
      for (const key of i.keys) {
        try {
          await resolveUnknown(
            g,
            i.outcome === 'sent'
              ? { key, outcome: 'sent', reason: i.reason, receipt: i.receipt, seen: i.seen?.[key] }
              : { key, outcome: 'not_sent', reason: i.reason, seen: i.seen?.[key] },
          );
          resolved++;
        } catch (error) {
          if (!(error instanceof LedgerError) || i.keys.length === 1) throw error;
          failed.push({ key, error: error.message });
        }
      }
      return { resolved, failed };
    },
    (i) => effectsSubject(i.keys),
    { seen: seenPerKey },
  );
}

export async function requestBumpAction(input: unknown) {
  return consoleAction(
    'effect.bump.request',
    requestBumpInput,
    input,
    (g, i) => requestBump(g, i),
    (i) => effectsSubject(i.keys),
    { seen: seenPerKey },
  );
}

export async function decideBumpAction(input: unknown) {
  return consoleAction(
    'effect.bump.approve',
    decideInput,
    input,
    (g, i) => decideBump(g, i),
    (i) => ({ type: 'approval', id: i.requestId }),
    { seen: seenField('seenStatus', "request's status") },
  );
}
