// pending -> done, only with a receipt that can be looked up later (S2).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite, type TransitionRequest } from './transition-effect.ts';

export const completeEffectInput = z.strictObject({
  ...effectRef,
  receipt: z.string().trim().min(1, 'a receipt is required for done (S2)').max(1024),
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
  evidence: evidenceField.optional(),
});

/** The transition this command asks for, from its input (parsed here: 422 naming the field). */
export function completeTransition(raw: unknown): TransitionRequest {
  const input = parseInput(completeEffectInput, raw);
  return {
    key: input.key,
    epoch: input.epoch,
    to: 'done',
    action: 'effect.complete',
    receipt: input.receipt,
    attemptId: input.attemptId,
    response: input.response,
    evidence: input.evidence,
  };
}

export async function completeEffect(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  return transitionEffect(ctx, completeTransition(raw), alongside);
}
