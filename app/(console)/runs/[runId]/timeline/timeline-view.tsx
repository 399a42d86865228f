'use client';
// A run's timeline page: every claim, provider call and answer, state change, decision and replay of
// the run in time order, read from its view and paged by the view's cursor. The filter (kinds, target,
// order) and the page live in the address, so a link shows the same events to whoever opens it (in
// their own scope, Z1). The server settles the events; the page draws them with TanStack Table.
import { usePathname, useRouter } from 'next/navigation';
import { useTable } from '@tanstack/react-table';
import { Link } from '@/components/ui/link.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import type { SP } from '@/components/search-params.ts';
import { PageView } from '@/components/views/page-view.tsx';
import type { TimelinePageView } from '@/lib/read-models/views/timeline-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { columns, features, KIND_LABEL } from './timeline-columns.tsx';

export function TimelineView({ runId }: { runId: string }) {
  return <PageView<TimelinePageView> view="timeline" runId={runId} title="Run timeline" Body={TimelineBody} />;
}

export function TimelineBody({ view, runId, sp }: { view: Wire<TimelinePageView>; runId: string; sp: SP }) {
  const router = useRouter();
  const pathname = usePathname();
  const table = useTable({ features, columns, data: view.events, getRowId: (e) => e.id });
  const go = (changes: Record<string, string | undefined>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(sp)) if (typeof v === 'string') p.set(k, v);
    for (const [k, v] of Object.entries(changes)) {
      if (v) p.set(k, v);
      else p.delete(k);
    }
    if (!('cursor' in changes)) p.delete('cursor');
    const query = p.toString();
    router.push(query ? `${pathname}?${query}` : pathname);
  };
  const filtered = view.kinds.length < view.allKinds.length || view.target !== null;
  return (
    <>
      <PageHeader
        title="Run timeline"
        description={
          <span>
            Run{' '}
            <Link className="mono text-blue-700 underline" href={`/runs/${runId}`}>
              {runId.slice(0, 8)}
            </Link>{' '}
            · workflow {view.workflow} · every claim, provider call and answer, state change, decision and replay,{' '}
            {view.order === 'newest' ? 'newest first' : 'oldest first'}
          </span>
        }
      />
      {/* Keyed by the address's filter: after Back the inputs show the filter of the rows shown. */}
      <form
        key={`${view.kinds.join(',')}|${view.target ?? ''}|${view.order}`}
        className="mb-3 flex flex-wrap items-end gap-3"
        role="search"
        aria-label="Filter the timeline"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const kinds = f.getAll('kind').map(String);
          go({
            kind: kinds.length === view.allKinds.length || kinds.length === 0 ? undefined : kinds.join(','),
            target: String(f.get('target') ?? '').trim() || undefined,
            order: f.get('order') === 'oldest' ? 'oldest' : undefined,
          });
        }}
      >
        <fieldset className="text-xs font-medium text-zinc-700">
          <legend>Kinds</legend>
          <div className="mt-1 flex flex-wrap gap-3">
            {view.allKinds.map((k) => (
              <label key={k} className="inline-flex items-center gap-1 font-normal">
                <input
                  type="checkbox"
                  name="kind"
                  value={k}
                  defaultChecked={view.kinds.includes(k)}
                  className="h-4 w-4"
                />
                {KIND_LABEL[k] ?? k}
              </label>
            ))}
          </div>
        </fieldset>
        <label className="text-xs font-medium text-zinc-700">
          Target
          <input
            name="target"
            defaultValue={view.target ?? ''}
            placeholder="ana@example.com"
            className={`${inputClass} mt-1 w-64`}
          />
        </label>
        <label className="text-xs font-medium text-zinc-700">
          Order
          <select name="order" defaultValue={view.order} className={`${inputClass} mt-1`}>
            <option value="newest">Newest first</option>
            <option value="oldest">Oldest first</option>
          </select>
        </label>
        <button type="submit" className={linkButton('primary', 'sm')}>
          Apply
        </button>
      </form>
      {view.events.length === 0 ? (
        <EmptyState title={filtered ? 'No event matches this filter' : 'Nothing has happened in this run yet'}>
          {filtered ? 'Tick more kinds or clear the target.' : null}
        </EmptyState>
      ) : (
        <div className="relative overflow-x-auto rounded-md border border-zinc-200">
          <table className="w-full text-sm [&_td]:px-3 [&_td]:py-2 [&_td]:align-top" data-testid="timeline-table">
            <thead className="bg-zinc-50 text-left text-xs uppercase tracking-wide text-zinc-500">
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => (
                    <th key={header.id} scope="col" className="px-3 py-2 font-medium">
                      <table.FlexRender header={header} />
                    </th>
                  ))}
                </tr>
              ))}
            </thead>
            <tbody className="divide-y divide-zinc-100 bg-white">
              {table.getRowModel().rows.map((row) => (
                <tr key={row.id} data-testid="timeline-row" data-kind={row.original.kind} className="hover:bg-zinc-50">
                  {row.getAllCells().map((cell) => (
                    <td key={cell.id}>
                      <table.FlexRender cell={cell} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="mt-3 flex justify-between">
        {sp.cursor ? (
          <button type="button" className={linkButton('secondary', 'sm')} onClick={() => go({ cursor: undefined })}>
            First page
          </button>
        ) : (
          <span />
        )}
        {view.next && (
          <button type="button" className={linkButton('secondary', 'sm')} onClick={() => go({ cursor: view.next! })}>
            Next page
          </button>
        )}
      </div>
    </>
  );
}
