'use client';
// What every operator page's shell renders: its view (read with TanStack Query, ./use-view.ts) in the
// frame (placeholder, not-found card, retry), drawn by the page's Body with the address's search
// parameters and, on a run's pages, the run id the route gave the page.
import { useSearchParams } from 'next/navigation';
import type { ReactNode } from 'react';
import { searchParamsOf, type SP } from '@/lib/read-models/views/query.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { useView } from './use-view.ts';
import { ViewFrame } from './view-frame.tsx';

/** What a page's Body is given (pages without a run id ignore it). */
export interface BodyProps<T> {
  view: Wire<T>;
  sp: SP;
  runId: string;
}

export function PageView<T>({
  view: name,
  runId = null,
  title,
  Body,
}: {
  /** The view's name under /api/console/views. */
  view: string;
  runId?: string | null;
  title: string;
  Body: (props: BodyProps<T>) => ReactNode;
}) {
  const params = useSearchParams();
  const view = useView<T>(name, runId);
  return (
    <ViewFrame view={view} title={title}>
      {(page) => <Body view={page} sp={searchParamsOf(params)} runId={runId ?? ''} />}
    </ViewFrame>
  );
}
