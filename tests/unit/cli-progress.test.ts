// The CLI's replay watch output: on a terminal a bar that fills with the fraction done, elsewhere a
// line a log can keep, both naming the counts.
import { describe, expect, it } from 'vitest';
import { progressBar, progressLine } from '@/lib/sdk/cli/watch.ts';
import { table } from '@/lib/sdk/cli/output.ts';

const p = { status: 'running', total: 200, sent: 90, skipped: 5, failed: 3, unknown: 2, remaining: 100, fraction: 0.5 };

describe('effect-ledger replay watch output', () => {
  it('the bar is filled in proportion and names done/total and the counts', () => {
    expect(progressBar(p, 10)).toBe('[#####.....]  50% 100/200 running (sent 90, failed 3, unknown 2)');
    expect(progressBar({ ...p, fraction: 1, remaining: 0, status: 'completed' }, 4)).toMatch(/^\[####\] 100% 200\/200/);
  });
  it('the line form carries every count', () => {
    expect(progressLine('r1', p)).toBe('replay r1: running 100/200 sent=90 skipped=5 failed=3 unknown=2');
  });
  it('tables pad columns to their widest cell and show missing values as -', () => {
    expect(
      table(
        [
          { a: 'x', b: null },
          { a: 'long', b: 2 },
        ],
        ['a', 'b'],
      ),
    ).toBe('A     B\nx     -\nlong  2\n');
  });
});
