// The support queue's shell: prerendered at build time; what it shows comes from its view,
// /api/console/views/support, with the address's filters, cursor and page size.
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { SupportView } from './support-view.tsx';

export const metadata: Metadata = { title: 'Support queue' };

export default function SupportPage() {
  return (
    <Suspense>
      <SupportView />
    </Suspense>
  );
}
