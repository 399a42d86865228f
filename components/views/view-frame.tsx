'use client';
// What a page shell shows around its view: a placeholder while the first answer loads, the console's
// not-found card for a missing subject, and a retry for a failed read.
import type { ReactNode } from 'react';
import { NotFoundCard } from '@/components/not-found-card.tsx';
import { EmptyState, PageHeader } from '@/components/ui/card.tsx';
import type { ConsoleView } from './use-console-view.ts';
import { ViewReloadProvider } from './page-refresh.tsx';
import type { Wire } from '@/lib/read-models/views/wire.ts';

export function ViewFrame<T>({
  view,
  title,
  children,
}: {
  view: ConsoleView<T>;
  title: string;
  children: (view: Wire<T>) => ReactNode;
}) {
  const { state } = view;
  if (state.status === 'ready')
    return (
      <ViewReloadProvider reload={view.reload}>
        <div aria-busy={state.refreshing} data-view="ready">
          {children(state.view)}
        </div>
      </ViewReloadProvider>
    );
  if (state.status === 'loading')
    return (
      <div aria-busy="true" data-testid="view-loading">
        <PageHeader title={title} />
        <div className="h-40 animate-pulse rounded-lg bg-zinc-100" />
        <span className="sr-only">Loading…</span>
      </div>
    );
  if (state.status === 'missing') return <NotFoundCard />;
  return (
    <>
      <PageHeader title={title} />
      <EmptyState title="This page could not be read">
        {state.detail}.{' '}
        <button type="button" className="underline" onClick={view.reload}>
          Try again
        </button>
      </EmptyState>
    </>
  );
}
