'use client';
// The console's reads through TanStack Query: a page's view, the navigation's data, and what a
// decision or a live change does afterwards (invalidate them, so they are read again).
import { useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useRouter, useSearchParams } from 'next/navigation';
import { startTransition, useCallback } from 'react';
import type { NavViewer } from '@/lib/read-models/views/viewer.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { fetchView, fetchViewer, VIEW_KEY, VIEWER_KEY, viewUrl } from './fetch-view.ts';

/** The view `name` (of run `runId` for a per-run page) for the address's search parameters. While a
 *  new address of the same page loads (a filter, the next page of a table) the last answer stays on
 *  screen, marked as fetching; another run starts blank rather than showing the previous run's. */
export function useView<T>(name: string, runId: string | null): UseQueryResult<Wire<T>> {
  const client = useQueryClient();
  const query = useSearchParams().toString();
  const url = viewUrl(name, runId, query);
  return useQuery({
    queryKey: [VIEW_KEY, name, runId, query],
    queryFn: ({ signal }) => fetchView<T>(url, signal, client),
    placeholderData: (previous, previousQuery) =>
      previousQuery?.queryKey[1] === name && previousQuery?.queryKey[2] === runId ? previous : undefined,
  });
}

/** The navigation's data: read once per tab, then kept current by every view's answer. */
export function useNavViewer(): Wire<NavViewer> | null {
  const { data } = useQuery({
    queryKey: VIEWER_KEY,
    queryFn: ({ signal }) => fetchViewer(signal),
    staleTime: 30_000,
  });
  return data ?? null;
}

/** "Show the page again after this change": the views on screen are invalidated (read again); a page
 *  rendered on the server, which has none, is re-rendered. */
export function useRefreshAfterChange(): () => void {
  const client = useQueryClient();
  const router = useRouter();
  return useCallback(() => {
    const views = client.getQueryCache().findAll({ queryKey: [VIEW_KEY], type: 'active' });
    // A view's answer carries the navigation's data; a server page's refresh does not.
    if (views.length > 0) return void client.invalidateQueries({ queryKey: [VIEW_KEY] });
    void client.invalidateQueries({ queryKey: VIEWER_KEY });
    startTransition(() => router.refresh());
  }, [client, router]);
}
