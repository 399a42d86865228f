// pending -> stuck: issued on the provider but permanently uncompletable (S6).
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { effectRef, evidenceField, type CommandContext } from './common.ts';
import { rawResponseInput } from './record-response.ts';
import { transitionEffect, type AlongsideWrite } from './transition-effect.ts';

export const markStuckInput = z.strictObject({
  ...effectRef,
  evidence: evidenceField,
  attemptId: z.uuid().optional(),
  /** The attempt's raw response (R1), stored in the same transaction. */
  response: rawResponseInput.optional(),
});

export async function markStuck(ctx: CommandContext, raw: unknown, alongside?: AlongsideWrite) {
  const input = parseInput(markStuckInput, raw);
  return transitionEffect(
    ctx,
    {
      key: input.key,
      epoch: input.epoch,
      to: 'stuck',
      action: 'effect.mark_stuck',
      evidence: input.evidence,
      attemptId: input.attemptId,
      response: input.response,
    },
    alongside,
  );
}
