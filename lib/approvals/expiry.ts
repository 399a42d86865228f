// One source of truth for how long a four-eyes request waits before it expires. Epoch-bump
// requests use a fixed window; replay requests use the configured REPLAY_APPROVAL_TTL_MINUTES.
// The approvals page describes both from here, so what it says matches what the commands do.
import { env } from '@/lib/env.ts';

export const BUMP_APPROVAL_TTL_HOURS = 24;

export interface ApprovalExpiry {
  bumpMinutes: number;
  replayMinutes: number;
}

export function approvalExpiry(): ApprovalExpiry {
  return { bumpMinutes: BUMP_APPROVAL_TTL_HOURS * 60, replayMinutes: env().REPLAY_APPROVAL_TTL_MINUTES };
}

/** "4 hours", "1 hour", "90 minutes": whole hours when the window is a whole number of hours. */
export function describeMinutes(minutes: number): string {
  if (minutes % 60 === 0) {
    const hours = minutes / 60;
    return `${hours} hour${hours === 1 ? '' : 's'}`;
  }
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

export function approvalExpiryText(expiry: ApprovalExpiry = approvalExpiry()): string {
  return (
    `Epoch bumps and replays wait here until a second operator approves them (Z3). ` +
    `An approval is bound to the hash of the exact set; bump requests expire after ` +
    `${describeMinutes(expiry.bumpMinutes)}, replay requests after ${describeMinutes(expiry.replayMinutes)}.`
  );
}
