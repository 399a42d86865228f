'use client';
// What every operator page's shell renders: the view for its address, in the frame (placeholder,
// not-found card, retry), drawn by the page's Body with the address's search parameters and run id.
import { usePathname, useSearchParams } from 'next/navigation';
import type { ReactNode } from 'react';
import { searchParamsOf, type SP } from '@/lib/read-models/views/query.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { usePageView } from './use-console-view.ts';
import { ViewFrame } from './view-frame.tsx';
import { runIdOf } from './view-paths.ts';

/** What a page's Body is given (pages without a run id ignore it). */
export interface BodyProps<T> {
  view: Wire<T>;
  sp: SP;
  runId: string;
}

export function PageView<T>({ title, Body }: { title: string; Body: (props: BodyProps<T>) => ReactNode }) {
  const pathname = usePathname();
  const params = useSearchParams();
  const view = usePageView<T>();
  return (
    <ViewFrame view={view} title={title}>
      {(page) => <Body view={page} sp={searchParamsOf(params)} runId={runIdOf(pathname)} />}
    </ViewFrame>
  );
}
