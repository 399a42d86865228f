// The audit trail's shell (/audit): prerendered at build time; what it shows comes from its view,
// /api/console/views/audit, which also records the read on the trail.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { AuditView } from './audit-view.tsx';

export const metadata: Metadata = { title: 'Audit trail' };

export default function AuditPage() {
  return (
    <Suspense>
      <AuditView />
    </Suspense>
  );
}
