// The forced replay page's shell (/runs/<id>/replay, rewritten here by next.config.js): prerendered at
// build time; what it shows comes from its view, /api/console/views/replay/<id>.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { ReplayView } from './replay-view.tsx';

export const metadata: Metadata = { title: 'Force replay' };

export default function ReplayPage() {
  return (
    <Suspense>
      <ReplayView />
    </Suspense>
  );
}
