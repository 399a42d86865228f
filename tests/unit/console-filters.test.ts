// Filters take what the console shows: a run's short id (its first 8 characters) as well as the whole
// id, and an inverted date range is named; refusals read without the field's internal id.
import { describe, expect, it } from 'vitest';
import { fieldMessage } from '@/components/field-message.ts';
import { dateRangeProblem, runIdRange } from '@/lib/read-models/common.ts';

describe('run id filters', () => {
  it('turn a short id or a whole id into the range of ids it starts', () => {
    expect(runIdRange('7F0C1D2E')).toEqual({
      lo: '7f0c1d2e-0000-0000-0000-000000000000',
      hi: '7f0c1d2e-ffff-ffff-ffff-ffffffffffff',
    });
    const whole = '7f0c1d2e-3a4b-4c5d-8e6f-708192a3b4c5';
    expect(runIdRange(whole)).toEqual({ lo: whole, hi: whole });
  });

  it('refuse text that starts no UUID', () => {
    for (const text of ['evt_order', '7f0', '7f0c1d2e3', '7f0c-1d2e', `${'a'.repeat(33)}`])
      expect(runIdRange(text)).toBeNull();
  });
});

describe('date ranges and messages', () => {
  it('name an inverted range on its "to" field', () => {
    expect(dateRangeProblem('2026-12-02', '2026-12-01')?.field).toBe('to');
    expect(dateRangeProblem('2026-12-01', '2026-12-02')).toBeNull();
  });

  it('show a refusal next to its field without the field id', () => {
    expect(fieldMessage('confirmPassword: the two new passwords differ', 'confirmPassword')).toBe(
      'The two new passwords differ',
    );
    expect(fieldMessage('reason: required', 'reason', 'Reason')).toBe('Reason: required');
  });
});
