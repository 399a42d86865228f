// Z8: a stale decision reads as what changed, by whom and when, and answers HTTP clients with 409
// problem+json carrying the same facts.
import { describe, expect, it } from 'vitest';
import { problemFrom } from '@/lib/api/problem.ts';
import { StaleDecision } from '@/lib/ledger/seen.ts';
import { describeStale, seenEffect, staleFactsOf, type StaleFacts } from '@/lib/ledger/seen-version.ts';

const facts: StaleFacts = {
  subjectType: 'effect',
  subjectId: 'v1:evt:send_email:receipt:order_1:email:ana@example.com',
  was: { state: 'pending', epoch: 1, changedAt: '2026-12-02T14:01:00.000Z' },
  now: { state: 'done', epoch: 1, changedAt: '2026-12-02T14:03:11.000Z' },
  changedBy: 'run-42',
  changedAt: '2026-12-02T14:03:11.000Z',
  retry: { seen: { state: 'done', epoch: 1, changedAt: '2026-12-02T14:03:11.000Z' } },
};

describe('Z8: stale decisions', () => {
  it('Z8: the message names the new and old state and who changed it', () => {
    const label = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
    expect(describeStale(facts, label)).toBe(
      'This target changed while you were looking: it is now Done (was Pending), by run-42',
    );
    expect(describeStale({ ...facts, now: { ...facts.now, state: 'pending', epoch: 2 } })).toBe(
      'This target changed while you were looking: it is now pending at epoch 2 (was pending at epoch 1), by run-42',
    );
  });

  it('Z8: an HTTP client gets 409 problem+json with the facts; the console reads them back', () => {
    const problem = problemFrom(new StaleDecision(facts));
    expect(problem).toMatchObject({ status: 409, code: 'conflict', stale: facts });
    expect(problem.detail).toContain('at 2026-12-02T14:03:11.000Z');
    expect(staleFactsOf({ stale: facts })).toEqual(facts);
    expect(staleFactsOf({ state: 'done' })).toBeNull();
  });

  it('Z8: a page version: a never-claimed target is none, a date becomes ISO with milliseconds', () => {
    expect(seenEffect({ epoch: null, state: null, changedAt: null })).toEqual({
      epoch: 1,
      state: 'none',
      changedAt: null,
    });
    expect(seenEffect({ epoch: 2, state: 'done', changedAt: new Date('2026-12-02T14:03:11.123Z') })).toEqual({
      epoch: 2,
      state: 'done',
      changedAt: '2026-12-02T14:03:11.123Z',
    });
  });
});
