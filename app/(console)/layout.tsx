import type { ReactNode } from 'react';
import { Nav } from '@/components/nav.tsx';
import { ConsoleQueryProvider } from '@/components/views/query-provider.tsx';

// The frame of every console page: static, so that the list pages can be sent as prerendered shells.
// Each page checks the session itself (server pages through requireViewer, shells through their view
// route); the navigation's data and every view are read in the browser through one TanStack Query
// client (components/views/query-provider.tsx).
export default function ConsoleLayout({ children }: { children: ReactNode }) {
  return (
    <ConsoleQueryProvider>
      <div className="flex min-h-screen flex-col md:flex-row">
        <Nav />
        <main id="main" tabIndex={-1} className="min-w-0 flex-1 px-4 py-5 outline-none sm:px-6 sm:py-6 lg:px-8">
          {children}
        </main>
      </div>
    </ConsoleQueryProvider>
  );
}
