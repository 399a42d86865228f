// -> revoked, only by an explicit action (S5): an operator with a reason, or a deletion through
// the product's own API (V1, recorded by the runtime in the same transaction as the deletion).
// Absence is never revocation: nothing here is ever called because a lookup came back empty.
import { z } from 'zod';
import { parseInput } from '../validate.ts';
import { reasonField } from '../fields.ts';
import { effectRef, type CommandContext } from './common.ts';
import { transitionEffect } from './transition-effect.ts';

export const revokeEffectInput = z.strictObject({
  ...effectRef,
  reason: reasonField,
});

export async function revokeEffect(ctx: CommandContext, raw: unknown) {
  const input = parseInput(revokeEffectInput, raw);
  return transitionEffect(ctx, {
    key: input.key,
    epoch: input.epoch,
    to: 'revoked',
    action: 'effect.revoke',
    reason: input.reason,
  });
}
