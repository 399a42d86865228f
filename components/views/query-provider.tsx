'use client';
// The console's one TanStack Query client, for the tab: views and the navigation's data are cached by
// address, so a second component asking for the same view shares one request, Back shows the last
// answer at once while it is read again, and a view is read again when the tab regains focus. A
// refused read (4xx) is not retried: it is an answer, not a hiccup.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { ViewError } from './fetch-view.ts';

function newClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failures, error) => !(error instanceof ViewError && error.status < 500) && failures < 2,
        refetchOnWindowFocus: true,
      },
    },
  });
}

export function ConsoleQueryProvider({ children }: { children: ReactNode }) {
  const [client] = useState(newClient);
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
