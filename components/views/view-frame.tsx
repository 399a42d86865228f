'use client';
// What a page shell shows around its view: a placeholder while the first answer loads, the console's
// not-found card for a missing subject, and a retry for a failed read.
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { NotFoundCard } from '@/components/not-found-card.tsx';
import { EmptyState, PageHeader } from '@/components/ui/card.tsx';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { ViewError } from './fetch-view.ts';

export function ViewFrame<T>({
  view,
  title,
  children,
}: {
  view: UseQueryResult<Wire<T>>;
  title: string;
  children: (view: Wire<T>) => ReactNode;
}) {
  const { data, error } = view;
  if (data !== undefined)
    return (
      <div aria-busy={view.isFetching && view.isPlaceholderData} data-view="ready">
        {children(data)}
      </div>
    );
  if (error instanceof ViewError && error.status === 404) return <NotFoundCard />;
  if (!error || (error instanceof ViewError && error.leaving))
    return (
      <div aria-busy="true" data-testid="view-loading">
        <PageHeader title={title} />
        <div className="h-40 animate-pulse rounded-lg bg-zinc-100" />
        <span className="sr-only">Loading…</span>
      </div>
    );
  return (
    <>
      <PageHeader title={title} />
      <EmptyState title="This page could not be read">
        {error.message}.{' '}
        <button type="button" className="underline" onClick={() => void view.refetch()}>
          Try again
        </button>
      </EmptyState>
    </>
  );
}
