'use client';
// Reads a console view (lib/api/console-view.ts) for a page shell: fetches it when its address
// changes, keeps showing the last answer while the next one loads (no flash of an empty page when a
// filter or the page of a table changes), re-reads it when the change feed reports a change to what
// it shows (live pages), and hands the navigation its data. A refused read leaves for sign-in, the
// password change or the forbidden page, as a server page would have redirected.
import { usePathname, useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useState } from 'react';
import type { NavViewer } from '@/lib/read-models/views/viewer.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { leaveFor, type Refusal } from './leave-for.ts';
import { setNavViewer } from './viewer-store.ts';
import { viewAddressOf } from './view-paths.ts';

export type ViewState<T> =
  | { status: 'loading' }
  | { status: 'ready'; view: Wire<T>; refreshing: boolean }
  | { status: 'missing'; detail: string }
  | { status: 'failed'; detail: string };

export interface ConsoleView<T> {
  state: ViewState<T>;
  /** Reads the view again (after a decision, or when the change feed says it moved). */
  reload: () => void;
}

export function useConsoleView<T>(url: string): ConsoleView<T> {
  const [state, setState] = useState<ViewState<T>>({ status: 'loading' });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    // A new address while an answer is shown: keep it, marked as refreshing.
    setState((s) => (s.status === 'ready' ? { ...s, refreshing: true } : s));
    void (async () => {
      try {
        const res = await fetch(url, {
          cache: 'no-store',
          signal: abort.signal,
          headers: { accept: 'application/json' },
        });
        const body = (await res.json().catch(() => ({}))) as { view?: Wire<T>; viewer?: Wire<NavViewer> } & Refusal;
        if (abort.signal.aborted) return;
        if (res.ok && body.view) {
          if (body.viewer) setNavViewer(body.viewer);
          setState({ status: 'ready', view: body.view, refreshing: false });
          return;
        }
        const leave = leaveFor({ ...body, status: res.status }, window.location.pathname + window.location.search);
        if (leave) {
          window.location.assign(leave);
          return;
        }
        const detail = body.detail ?? `the server answered ${res.status}`;
        setState({ status: res.status === 404 ? 'missing' : 'failed', detail });
      } catch (error) {
        if (abort.signal.aborted) return;
        setState({ status: 'failed', detail: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => abort.abort();
  }, [url, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { state, reload };
}

/** The view of the page at this address (a shell's: components/views/view-paths.ts says which). */
export function usePageView<T>(): ConsoleView<T> {
  const pathname = usePathname();
  const query = useSearchParams().toString();
  return useConsoleView<T>(viewAddressOf(query ? `${pathname}?${query}` : pathname) ?? '/api/console/views/me');
}
