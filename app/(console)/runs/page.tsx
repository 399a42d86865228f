// The runs list's shell: prerendered at build time; what it shows comes from its view,
// /api/console/views/runs, with the address's filters and cursor.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { RunsView } from './runs-view.tsx';

export const metadata: Metadata = { title: 'Runs' };

export default function RunsPage() {
  return (
    <Suspense>
      <RunsView />
    </Suspense>
  );
}
