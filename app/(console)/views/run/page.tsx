// The run page's shell (/runs/<id>, rewritten here by next.config.js): prerendered at build time; what
// it shows comes from its view, /api/console/views/run/<id>.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { RunView } from './run-view.tsx';

export const metadata: Metadata = { title: 'Run' };

export default function RunPage() {
  return (
    <Suspense>
      <RunView />
    </Suspense>
  );
}
