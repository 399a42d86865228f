// pending -> stuck: issued on the provider but permanently uncompletable (S6).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite, type TransitionRequest } from './transition-effect.ts';

export const markStuckInput = z.strictObject({
  ...effectRef,
  evidence: evidenceField,
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
});

/** The transition this command asks for, from its input (parsed here: 422 naming the field). */
export function stuckTransition(raw: unknown): TransitionRequest {
  const input = parseInput(markStuckInput, raw);
  return {
    key: input.key,
    epoch: input.epoch,
    to: 'stuck',
    action: 'effect.mark_stuck',
    evidence: input.evidence,
    attemptId: input.attemptId,
    response: input.response,
  };
}

export async function markStuck(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  return transitionEffect(ctx, stuckTransition(raw), alongside);
}
