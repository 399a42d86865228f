// A run's timeline (/runs/<id>/timeline): the server checks the run (../require-run.ts, 404
// otherwise); the events come from its view, /api/console/views/timeline/<id>, read in the browser.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { requireRun } from '../require-run.ts';
import { TimelineView } from './timeline-view.tsx';

export const metadata: Metadata = { title: 'Run timeline' };

export default async function TimelinePage({ params }: { params: Promise<{ runId: string }> }) {
  const runId = await requireRun(params, '/timeline');
  return (
    <Suspense>
      <TimelineView runId={runId} />
    </Suspense>
  );
}
