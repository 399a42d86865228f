// How the console reads a JSON view (lib/api/console-view.ts) for TanStack Query: the view, with the
// navigation's data it carries put in the cache beside it; a refusal that means "go elsewhere"
// (signed out, a password to change, forbidden) leaves for that page, as a server page would redirect.
import type { QueryClient } from '@tanstack/react-query';
import type { NavViewer } from '@/lib/read-models/views/viewer.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { leaveFor, type Refusal } from '@/lib/auth/leave-for.ts';

/** The query key of the navigation's data (who is signed in, roles, the unread count). */
export const VIEWER_KEY = ['viewer'] as const;
/** Every view's query key starts with this: a change invalidates them all at once. */
export const VIEW_KEY = 'view';

/** The address of a view: /api/console/views/<name>[/<run id>]?<the page's query>. */
export function viewUrl(name: string, runId: string | null, query: string): string {
  const subject = runId === null ? '' : `/${encodeURIComponent(runId)}`;
  return `/api/console/views/${name}${subject}${query ? `?${query}` : ''}`;
}

/** A view the server did not answer: missing (404), refused, or failed. */
export class ViewError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    /** The page is leaving for sign-in, the password change or the forbidden page. */
    readonly leaving = false,
  ) {
    super(detail);
  }
}

interface Answer<T> extends Refusal {
  view?: Wire<T>;
  viewer?: Wire<NavViewer>;
}

async function read<T>(url: string, signal: AbortSignal): Promise<Answer<T> & { ok: boolean; status: number }> {
  const res = await fetch(url, { cache: 'no-store', signal, headers: { accept: 'application/json' } });
  const body = (await res.json().catch(() => ({}))) as Answer<T>;
  return { ...body, ok: res.ok, status: res.status };
}

function refused(answer: Refusal & { status: number }): never {
  const leave = leaveFor(answer, window.location.pathname + window.location.search);
  if (leave) {
    window.location.assign(leave);
    throw new ViewError(answer.status, 'leaving', true);
  }
  throw new ViewError(answer.status, answer.detail ?? `the server answered ${answer.status}`);
}

export async function fetchView<T>(url: string, signal: AbortSignal, client: QueryClient): Promise<Wire<T>> {
  const answer = await read<T>(url, signal);
  if (answer.ok && answer.view) {
    if (answer.viewer) client.setQueryData(VIEWER_KEY, answer.viewer);
    return answer.view;
  }
  return refused(answer);
}

export async function fetchViewer(signal: AbortSignal): Promise<Wire<NavViewer>> {
  const answer = await read<never>('/api/console/views/me', signal);
  if (answer.ok && answer.viewer) return answer.viewer;
  return refused(answer);
}
