// The forced replay page (/runs/<id>/replay): the server checks the run (../require-run.ts, 404
// otherwise); what it shows comes from its view, /api/console/views/replay/<id>, read in the browser.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { requireRun } from '../require-run.ts';
import { ReplayView } from './replay-view.tsx';

export const metadata: Metadata = { title: 'Force replay' };

export default async function ReplayPage({ params }: { params: Promise<{ runId: string }> }) {
  const runId = await requireRun(params, '/replay');
  return (
    <Suspense>
      <ReplayView runId={runId} />
    </Suspense>
  );
}
