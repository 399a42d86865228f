import { describe, expect, it } from 'vitest';
import { approvalExpiryText, describeMinutes } from '@/lib/approvals/expiry.ts';
import { env } from '@/lib/env.ts';

describe('approval expiry text', () => {
  it('names both kinds of request with their own windows', () => {
    const text = approvalExpiryText({ bumpMinutes: 24 * 60, replayMinutes: 240 });
    expect(text).toContain('bump requests expire after 24 hours');
    expect(text).toContain('replay requests after 4 hours');
  });

  it('follows the configured replay window', () => {
    const minutes = env().REPLAY_APPROVAL_TTL_MINUTES;
    expect(approvalExpiryText()).toContain(`replay requests after ${describeMinutes(minutes)}`);
    expect(describeMinutes(90)).toBe('90 minutes');
    expect(describeMinutes(60)).toBe('1 hour');
  });
});
