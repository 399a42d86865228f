import { describe, expect, it } from 'vitest';
import { shownRunStatus } from '@/lib/read-models/run-status.ts';

describe('the status the console shows for a run', () => {
  it('a crashed run stays crashed until a forced replay has finished', () => {
    expect(shownRunStatus('crashed', false, { numerator: 3, denominator: 10 })).toBe('crashed');
  });
  it('after a finished replay it reads recovered when every approved target has exactly one done effect (P4)', () => {
    expect(shownRunStatus('crashed', true, { numerator: 10, denominator: 10 })).toBe('recovered');
  });
  it('after a finished replay with gaps left it reads replayed, never crashed', () => {
    expect(shownRunStatus('crashed', true, { numerator: 9, denominator: 10 })).toBe('replayed');
    expect(shownRunStatus('crashed', true, null)).toBe('replayed');
  });
  it('other statuses are shown as they are', () => {
    expect(shownRunStatus('running', true, null)).toBe('running');
    expect(shownRunStatus('completed', false, null)).toBe('completed');
  });
});
