// The plan page's shell (/runs/<id>/plan, rewritten here by next.config.js): prerendered at build
// time; what it shows comes from its view, /api/console/views/plan/<id>.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { PlanView } from './plan-view.tsx';

export const metadata: Metadata = { title: 'Plan approval' };

export default function PlanPage() {
  return (
    <Suspense>
      <PlanView />
    </Suspense>
  );
}
