'use client';
// The support queue: every unknown key in the viewer's scope, oldest first, filtered and paged by
// the address, read from the support view and kept live. Resolving one (a row's dialog or the bulk
// bar) reads the view again; the decision carries the version its row showed (Z8).
import { Link } from '@/components/ui/link.tsx';
import { SupportBulkResolve } from '@/app/(console)/_components/support-bulk.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { withParams, type SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';
import { PageView } from '@/components/views/page-view.tsx';
import type { SupportPage } from '@/lib/read-models/views/support-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { UnknownList } from './unknown-list.tsx';

export function SupportView() {
  return <PageView<SupportPage> view="support" title="Support queue" Body={SupportBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). */
export function SupportBody({ view, sp }: { view: Wire<SupportPage>; sp: SP }) {
  const { filter, filtered, cursor, total, rows, resolvable, next } = view;
  return (
    <>
      <PageHeader
        title="Support queue"
        description={`Every unknown key across runs, oldest first (${total.toLocaleString('en-US')} open). Unknowns are never retried automatically (S4): resolve each as sent (with a receipt or evidence) or not sent.`}
      />
      <LiveRefresh topics={['unknown']} />
      <Card>
        {/* Submitted with GET, the filters land in the address the shell reads. The body stays mounted
            across views (a live change, a decision), so typed text survives them; the form is keyed
            by the filters applied, so its defaults follow a new address (Clear, back). */}
        <form
          key={JSON.stringify(filter)}
          method="get"
          role="search"
          aria-label="Filter the queue"
          className="mb-4 grid gap-3 sm:grid-cols-4"
        >
          <label className="text-xs font-medium text-zinc-700">
            Run id (or its first 8 characters)
            <input name="run" defaultValue={filter.runId} className={`${inputClass} mt-1`} />
          </label>
          <label className="text-xs font-medium text-zinc-700">
            Workflow (start of its name)
            <input name="workflow" defaultValue={filter.workflow} className={`${inputClass} mt-1`} />
          </label>
          <label className="text-xs font-medium text-zinc-700">
            Recipient starts with
            <input name="recipient" defaultValue={filter.target} className={`${inputClass} mt-1`} />
          </label>
          <div className="flex items-end gap-2">
            <button type="submit" className={linkButton('primary', 'sm')}>
              Apply filters
            </button>
            {filtered && (
              <Link href="/support" className={linkButton('ghost', 'sm')}>
                Clear
              </Link>
            )}
          </div>
        </form>
        {/* The bulk bar and the list stay mounted when the page empties: a dialog open on them keeps
            its row, its text and its outcome (unknown-list.tsx). */}
        <SupportBulkResolve onPage={resolvable} />
        {rows.length === 0 && filtered ? (
          <EmptyState title="No unknown matches these filters">Clear a filter to see the whole queue.</EmptyState>
        ) : rows.length === 0 ? (
          <EmptyState title="Nothing to resolve">
            No key is in the unknown state. Keys land here when a call ends ambiguously or a lease expires without a
            receipt.
          </EmptyState>
        ) : null}
        <UnknownList rows={rows} />
        <div className="mt-3 flex flex-wrap items-center justify-between gap-2">
          {cursor ? (
            <Link href={withParams('/support', sp, { cursor: undefined })} className={linkButton('secondary', 'sm')}>
              Oldest first
            </Link>
          ) : (
            <span />
          )}
          <RowsPerPage path="/support" sp={sp} />
          {next && (
            <Link href={withParams('/support', sp, { cursor: next })} className={linkButton('secondary', 'sm')}>
              Next page
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}
