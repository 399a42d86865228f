'use client';
// The navigation's data (who is signed in, roles, unread count), kept in the browser across page
// changes. Every console view answer carries it; pages rendered on the server leave the navigation
// to ask for it (/api/console/views/me). One store, so the navigation never shows two answers at once.
import { useSyncExternalStore } from 'react';
import type { NavViewer } from '@/lib/read-models/views/viewer.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { leaveFor, type Refusal } from './leave-for.ts';

let current: Wire<NavViewer> | null = null;
const listeners = new Set<() => void>();

export function setNavViewer(viewer: Wire<NavViewer>): void {
  current = viewer;
  for (const l of listeners) l();
}

export function useNavViewer(): Wire<NavViewer> | null {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
    () => null,
  );
}

/** Asks for the navigation's data on a page that is not a view (a page rendered on the server), or
 *  after a change to the unread count. */
export async function refreshNavViewer(): Promise<void> {
  const res = await fetch('/api/console/views/me', { cache: 'no-store', headers: { accept: 'application/json' } });
  const body = (await res.json().catch(() => ({}))) as { viewer?: Wire<NavViewer> } & Refusal;
  if (res.ok && body.viewer) return setNavViewer(body.viewer);
  const leave = leaveFor({ ...body, status: res.status }, window.location.pathname + window.location.search);
  if (leave) window.location.assign(leave);
}
