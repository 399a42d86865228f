// Support resolves an unknown (S4): "sent" (unknown -> done, with the receipt or an evidence
// reference) or "not sent" (unknown -> pending, awaiting the next forced replay's claim).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { reasonField } from '../fields.ts';
import { decideOnSeenEffect, seenEffectField } from '../seen.ts';
import { effectRef, type CommandContext } from './common.ts';
import { transitionEffect } from './transition-effect.ts';

export const resolveUnknownInput = z.discriminatedUnion('outcome', [
  z.strictObject({
    ...effectRef,
    outcome: z.literal('sent'),
    reason: reasonField,
    /** Z8: the version support was shown; a change since then refuses the resolution. */
    seen: seenEffectField.optional(),
    /** The provider receipt, or a reference to the evidence (ticket, screenshot id). */
    receipt: z.string().trim().min(1, 'give the provider receipt or an evidence reference').max(1024),
    evidence: z.string().trim().max(4000).optional(),
  }),
  z.strictObject({
    ...effectRef,
    outcome: z.literal('not_sent'),
    reason: reasonField,
    seen: seenEffectField.optional(),
  }),
]);

export async function resolveUnknown(ctx: CommandContext, raw: unknown) {
  const input = parseInput(resolveUnknownInput, raw);
  return decideOnSeenEffect(ctx.db, input.key, input.seen, (db) => resolveAsSeen({ ...ctx, db }, input));
}

function resolveAsSeen(ctx: CommandContext, input: z.output<typeof resolveUnknownInput>) {
  const epoch = input.epoch ?? input.seen?.epoch;
  if (input.outcome === 'sent') {
    return transitionEffect(ctx, {
      key: input.key,
      epoch,
      to: 'done',
      action: 'effect.resolve_sent',
      reason: input.reason,
      receipt: input.receipt,
      evidence: input.evidence ? { note: input.evidence } : { note: 'receipt given by support' },
    });
  }
  return transitionEffect(ctx, {
    key: input.key,
    epoch,
    to: 'pending',
    action: 'effect.resolve_not_sent',
    reason: input.reason,
  });
}
