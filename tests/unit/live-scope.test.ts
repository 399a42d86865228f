// Z1 on the live feed: a viewer with per-workflow grants learns nothing about other workflows' runs.
import { describe, expect, it } from 'vitest';
import { changeVisibleTo } from '@/lib/live/scope.ts';

const scoped = { all: false as const, workflows: ['welcome'] };

describe('live change feed narrowed to the viewer (Z1)', () => {
  it('an all-workflows viewer gets the change as it is', () => {
    const change = { runs: ['r1'], workflows: ['billing'], topics: ['effect' as const] };
    expect(changeVisibleTo(change, { all: true })).toBe(change);
  });

  it('a change wholly inside the viewer’s workflows passes with its runs', () => {
    const change = { runs: ['r1'], workflows: ['welcome'], topics: ['effect' as const] };
    expect(changeVisibleTo(change, scoped)).toEqual(change);
  });

  it('a change wholly outside is not sent at all', () => {
    expect(changeVisibleTo({ runs: ['r2'], workflows: ['billing'], topics: ['unknown'] }, scoped)).toBeNull();
  });

  it('a mixed change loses its run ids and the other workflows’ names', () => {
    const visible = changeVisibleTo(
      { runs: ['r1', 'r2'], workflows: ['welcome', 'billing'], topics: ['plan'] },
      scoped,
    );
    expect(visible).toEqual({ runs: null, workflows: ['welcome'], topics: ['plan'] });
  });
});
