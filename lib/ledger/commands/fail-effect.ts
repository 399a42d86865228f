// pending -> failed: a known, definitive rejection; it frees the key for the next claim (S3).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite } from './transition-effect.ts';

export const failEffectInput = z.strictObject({
  ...effectRef,
  evidence: evidenceField,
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
});

export async function failEffect(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  const input = parseInput(failEffectInput, raw);
  return transitionEffect(
    ctx,
    {
      key: input.key,
      epoch: input.epoch,
      to: 'failed',
      action: 'effect.fail',
      evidence: input.evidence,
      attemptId: input.attemptId,
      response: input.response,
    },
    alongside,
  );
}
