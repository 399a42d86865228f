// The run page (/runs/<id>): the server checks the run (./require-run.ts, 404 otherwise); what it
// shows comes from its view, /api/console/views/run/<id>, read in the browser (docs/ARCHITECTURE.md).
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { requireRun } from './require-run.ts';
import { RunView } from './run-view.tsx';

export const metadata: Metadata = { title: 'Run' };

export default async function RunPage({ params }: { params: Promise<{ runId: string }> }) {
  const runId = await requireRun(params);
  return (
    <Suspense>
      <RunView runId={runId} />
    </Suspense>
  );
}
