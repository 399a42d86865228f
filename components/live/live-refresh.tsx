'use client';
// Live pages: re-renders the server page, or re-reads the page's view, when the change feed reports a change to
// what the page shows, and shows whether the page is live. A refresh re-runs the server components
// only: client state (checked rows, typed text, open dialogs), the URL (filters, cursors) and the
// scroll position stay as they are. Changes are coalesced: one refresh at most every second.
import { useEffect, useRef, useState } from 'react';
import { changeMatches, type LiveChange, type LiveTopic } from '@/lib/live/change.ts';
import { subscribeLive, type LiveStatus } from './connection.ts';
import { useRefreshAfterChange } from '../views/use-view.ts';

/** Waits this long after a change for others that belong with it (a replay moves many rows at once). */
const SETTLE_MS = 300;
const MIN_GAP_MS = 1000;

/** Calls `onChange` for every change to `runId` (any run when absent) of one of `topics`. */
export function useLiveChanges(
  interest: { runId?: string; topics: readonly LiveTopic[] },
  onChange: (change: LiveChange) => void,
): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const latest = useRef({ interest, onChange });
  useEffect(() => {
    latest.current = { interest, onChange };
  });
  useEffect(
    () =>
      subscribeLive((change) => {
        if (changeMatches(change, latest.current.interest)) latest.current.onChange(change);
      }, setStatus),
    [],
  );
  return status;
}

const LABEL: Record<LiveStatus, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  'signed-out': 'Signed out: reload to sign in',
};
const DOT: Record<LiveStatus, string> = {
  connecting: 'bg-zinc-400',
  live: 'bg-emerald-500',
  reconnecting: 'bg-amber-500',
  'signed-out': 'bg-red-500',
};

/** The live indicator for a page, placed under its header; refreshes the page on a relevant change
 *  (its views are invalidated and read again; a server page is re-rendered: ../views/use-view.ts). */
export function LiveRefresh({ runId, topics }: { runId?: string; topics: LiveTopic[] }) {
  const refresh = useRefreshAfterChange();
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const lastRefresh = useRef(0);
  const [refreshes, setRefreshes] = useState(0);
  const status = useLiveChanges({ runId, topics }, () => {
    if (timer.current) return; // a refresh is already scheduled and will show this change too
    const wait = Math.max(SETTLE_MS, lastRefresh.current + MIN_GAP_MS - Date.now());
    timer.current = setTimeout(() => {
      timer.current = null;
      lastRefresh.current = Date.now();
      setRefreshes((n) => n + 1);
      refresh();
    }, wait);
  });
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return (
    <div className="-mt-3 mb-3 flex justify-end">
      <span
        role="status"
        aria-live="polite"
        data-testid="live-status"
        data-state={status}
        data-refreshes={refreshes}
        title="This page updates by itself when what it shows changes."
        className="inline-flex items-center gap-1.5 rounded-full border border-zinc-200 bg-white px-2 py-0.5 text-xs text-zinc-600"
      >
        <span aria-hidden className={`h-2 w-2 rounded-full ${DOT[status]}`} />
        {LABEL[status]}
      </span>
    </div>
  );
}
