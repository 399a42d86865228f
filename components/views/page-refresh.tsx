'use client';
// "Show the page again after this change": a page rendered on the server is re-rendered
// (router.refresh); a page drawn from a view (ViewFrame) reads its view again. Dialogs, forms and the
// live indicator call usePageRefresh() and need not know which kind of page they sit on.
import { useRouter } from 'next/navigation';
import { createContext, startTransition, useCallback, useContext, type ReactNode } from 'react';

const ViewReload = createContext<(() => void) | null>(null);

export function ViewReloadProvider({ reload, children }: { reload: () => void; children: ReactNode }) {
  return <ViewReload.Provider value={reload}>{children}</ViewReload.Provider>;
}

export function usePageRefresh(): () => void {
  const reload = useContext(ViewReload);
  const router = useRouter();
  return useCallback(() => {
    if (reload) reload();
    else startTransition(() => router.refresh());
  }, [reload, router]);
}
