import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { canOn } from '@/lib/auth/grants.ts';
import { supportQueue } from '@/lib/read-models/support.ts';
import { SupportBulkResolve } from '@/app/(console)/_components/support-bulk.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { one, pageSize, withParams, type SP } from '@/components/search-params.ts';
import { RowsPerPage } from '@/components/rows-per-page.tsx';
import { UnknownList } from './unknown-list.tsx';

export const metadata: Metadata = { title: 'Support queue' };

export default async function SupportPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { user, db, scope }] = await Promise.all([searchParams, requireViewer()]);
  const filter = { runId: one(sp, 'run'), workflow: one(sp, 'workflow'), target: one(sp, 'recipient') };
  const filtered = Boolean(filter.runId || filter.workflow || filter.target);
  const q = await supportQueue(db, scope, { cursor: one(sp, 'cursor'), limit: pageSize(sp), ...filter });
  // Per row: a person may hold support on some of the workflows they see (Z1), as the server checks.
  const canResolve = (workflow: string) => canOn(user.grants, 'effect.resolve', workflow);
  const resolvable = q.rows.filter((r) => canResolve(r.workflow)).length;
  return (
    <>
      <PageHeader
        title="Support queue"
        description={`Every unknown key across runs, oldest first (${q.total.toLocaleString('en-US')} open). Unknowns are never retried automatically (S4): resolve each as sent (with a receipt or evidence) or not sent.`}
      />
      <LiveRefresh topics={['unknown']} />
      <Card>
        <form method="get" role="search" aria-label="Filter the queue" className="mb-4 grid gap-3 sm:grid-cols-4">
          <label className="text-xs font-medium text-zinc-700">
            Run id
            <input name="run" defaultValue={filter.runId} className={`${inputClass} mt-1`} />
          </label>
          <label className="text-xs font-medium text-zinc-700">
            Workflow
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
        {resolvable > 0 && <SupportBulkResolve onPage={resolvable} />}
        {q.rows.length === 0 && filtered ? (
          <EmptyState title="No unknown matches these filters">Clear a filter to see the whole queue.</EmptyState>
        ) : q.rows.length === 0 ? (
          <EmptyState title="Nothing to resolve">
            No key is in the unknown state. Keys land here when a call ends ambiguously or a lease expires without a
            receipt.
          </EmptyState>
        ) : (
          <UnknownList rows={q.rows.map((r) => ({ ...r, canResolve: canResolve(r.workflow) }))} />
        )}
        <div className="mt-3 flex flex-wrap items-center justify-between gap-2">
          {one(sp, 'cursor') ? (
            <Link href={withParams('/support', sp, { cursor: undefined })} className={linkButton('secondary', 'sm')}>
              Oldest first
            </Link>
          ) : (
            <span />
          )}
          <RowsPerPage path="/support" sp={sp} />
          {q.next && (
            <Link href={withParams('/support', sp, { cursor: q.next })} className={linkButton('secondary', 'sm')}>
              Next page
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}
