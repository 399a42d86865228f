// Four-eyes (Z3): a request for a forced replay or an epoch bump is approved by someone other than
// the person who asked for it. Both kinds of request ask here, so the rule and its wording live once.
import type { Actor } from '@/lib/core/actor.ts';

export const FOUR_EYES_REFUSAL = 'four-eyes: the requester cannot approve their own request (Z3)';

/** Why this decision is refused under four-eyes, or null when it may go ahead. Rejecting one's own
 *  request is withdrawing it, which needs no second person. */
export function fourEyesRefusal(requestedById: string, decider: Actor, decision: 'approve' | 'reject'): string | null {
  return decision === 'approve' && requestedById === decider.id ? FOUR_EYES_REFUSAL : null;
}
