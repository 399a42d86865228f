// The plan page (/runs/<id>/plan): the server checks the run (../require-run.ts, 404 otherwise); what
// it shows comes from its view, /api/console/views/plan/<id>, read in the browser.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { requireRun } from '../require-run.ts';
import { PlanView } from './plan-view.tsx';

export const metadata: Metadata = { title: 'Plan approval' };

export default async function PlanPage({ params }: { params: Promise<{ runId: string }> }) {
  const runId = await requireRun(params, '/plan');
  return (
    <Suspense>
      <PlanView runId={runId} />
    </Suspense>
  );
}
