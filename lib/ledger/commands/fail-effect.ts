// pending -> failed: a known, definitive rejection; it frees the key for the next claim (S3).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite, type TransitionRequest } from './transition-effect.ts';

export const failEffectInput = z.strictObject({
  ...effectRef,
  evidence: evidenceField,
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
});

/** The transition this command asks for, from its input (parsed here: 422 naming the field). */
export function failTransition(raw: unknown): TransitionRequest {
  const input = parseInput(failEffectInput, raw);
  return {
    key: input.key,
    epoch: input.epoch,
    to: 'failed',
    action: 'effect.fail',
    evidence: input.evidence,
    attemptId: input.attemptId,
    response: input.response,
  };
}

export async function failEffect(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  return transitionEffect(ctx, failTransition(raw), alongside);
}
