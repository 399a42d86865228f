// pending -> unknown: the call ended ambiguously or the lease expired (S4). Never retried by itself.
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite, type TransitionRequest } from './transition-effect.ts';

export const markUnknownInput = z.strictObject({
  ...effectRef,
  evidence: evidenceField.optional(),
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
});

/** The transition this command asks for, from its input (parsed here: 422 naming the field). */
export function unknownTransition(raw: unknown): TransitionRequest {
  const input = parseInput(markUnknownInput, raw);
  return {
    key: input.key,
    epoch: input.epoch,
    to: 'unknown',
    action: 'effect.mark_unknown',
    evidence: input.evidence ?? null,
    attemptId: input.attemptId,
    response: input.response,
  };
}

export async function markUnknown(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  return transitionEffect(ctx, unknownTransition(raw), alongside);
}
