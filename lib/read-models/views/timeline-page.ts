// Everything a run's timeline page shows: one page of the run's events in time order with the filter
// as applied (kinds, target, order) and the next page's cursor. A malformed kind, order or cursor is a
// 422 naming it (./run-timeline-query.ts); a run that is missing or outside the viewer's scope (Z1) is
// null, which the route answers 404, both alike.
import { runTimeline, type TimelineEvent } from '../run-timeline.ts';
import { TIMELINE_KINDS, timelineQuery, type TimelineKind, type TimelineOrder } from '../run-timeline-query.ts';
import type { ConsoleViewer } from './viewer.ts';
import type { SP } from './query.ts';

export interface TimelinePageView {
  workflow: string;
  /** The kinds shown; every kind when the address names none. */
  kinds: TimelineKind[];
  allKinds: readonly TimelineKind[];
  target: string | null;
  order: TimelineOrder;
  rows: number;
  events: TimelineEvent[];
  next: string | null;
}

export async function timelinePage(v: ConsoleViewer, runId: string, sp: SP): Promise<TimelinePageView | null> {
  const q = timelineQuery(sp);
  const page = await runTimeline(v.db, runId, v.scope, q);
  if (!page) return null;
  return {
    workflow: page.workflow,
    kinds: q.kinds,
    allKinds: TIMELINE_KINDS,
    target: q.target,
    order: q.order,
    rows: q.limit,
    events: page.events,
    next: page.next,
  };
}
