'use client';
// The runs list: every agent run in the viewer's scope with its plan, its targets by state and the
// exactly-once figure (P4), filtered and paged by the address, read from the runs view.
import { Link } from '@/components/ui/link.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader, inputClass } from '@/components/ui/card.tsx';
import { ExactlyOnce, StateBar } from '@/components/state-bar.tsx';
import { Time } from '@/components/time.tsx';
import { withParams, type SP } from '@/components/search-params.ts';
import { PageView } from '@/components/views/page-view.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import { SHOWN_RUN_STATUS_TONE, type ShownRunStatus } from '@/lib/read-models/run-status.ts';
import type { RunsPage } from '@/lib/read-models/views/runs-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';

export function RunsView() {
  return <PageView<RunsPage> view="runs" title="Runs" Body={RunsBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). */
export function RunsBody({ view, sp }: { view: Wire<RunsPage>; sp: SP }) {
  const { filter, problem, filtered, rows, next, workflows } = view;
  return (
    <>
      <PageHeader
        title="Runs"
        description="Every agent run with its plan, the state of each approved target, and the exactly-once figure: approved targets with exactly one done effect / approved targets (P4)."
      />
      <LiveRefresh topics={['run', 'plan', 'effect', 'replay']} />
      <Card>
        {/* Submitted with GET, the filters land in the address the shell reads. The body stays mounted
            across views, so the form is keyed by the filters applied: its defaults follow a new
            address (Clear, back) instead of keeping what an earlier view filled in. */}
        <form
          key={JSON.stringify({ ...filter, cursor: undefined })}
          method="get"
          className="mb-4 grid grid-cols-2 gap-3 md:grid-cols-6"
          role="search"
          aria-label="Filter runs"
        >
          <label className="col-span-2 text-xs font-medium text-zinc-700">
            Event or run id
            <input name="q" defaultValue={filter.q} placeholder="evt_… or 3f2a9c1e" className={`${inputClass} mt-1`} />
          </label>
          <label className="text-xs font-medium text-zinc-700">
            Workflow
            <select name="workflow" defaultValue={filter.workflow ?? ''} className={`${inputClass} mt-1`}>
              <option value="">All</option>
              {workflows.map((w) => (
                <option key={w} value={w}>
                  {w}
                </option>
              ))}
            </select>
          </label>
          <label className="text-xs font-medium text-zinc-700">
            Status
            <select name="status" defaultValue={filter.status ?? ''} className={`${inputClass} mt-1`}>
              <option value="">All</option>
              {['running', 'completed', 'crashed', 'replaying'].map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label className="text-xs font-medium text-zinc-700">
            From
            <input type="date" name="from" defaultValue={filter.from} className={`${inputClass} mt-1`} />
          </label>
          <label className="text-xs font-medium text-zinc-700">
            To (exclusive)
            <input
              type="date"
              name="to"
              defaultValue={filter.to}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem ? 'runs-filter-problem' : undefined}
              className={`${inputClass} mt-1`}
            />
          </label>
          {problem && (
            <p
              id="runs-filter-problem"
              role="alert"
              className="col-span-2 rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 md:col-span-6"
            >
              {problem.message}
            </p>
          )}
          <div className="col-span-2 flex gap-2 md:col-span-6">
            <button type="submit" className={linkButton('primary', 'sm')}>
              Apply filters
            </button>
            {filtered && (
              <Link href="/runs" className={linkButton('ghost', 'sm')}>
                Clear
              </Link>
            )}
          </div>
        </form>
        {rows.length === 0 ? (
          <EmptyState
            title={problem ? 'The date range is inverted' : filtered ? 'No run matches these filters' : 'No runs yet'}
          >
            {problem
              ? 'Swap "From" and "To".'
              : filtered
                ? 'Clear a filter or widen the time range.'
                : 'Runs appear here as soon as an agent runtime creates one through the API (POST /api/v1/runs).'}
          </EmptyState>
        ) : (
          <div className="relative overflow-x-auto">
            <table className="w-full text-sm">
              <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
                <tr className="border-b border-zinc-200">
                  <th scope="col" className="py-2 pr-3 font-medium">
                    Run
                  </th>
                  <th scope="col" className="py-2 pr-3 font-medium">
                    Workflow
                  </th>
                  <th scope="col" className="py-2 pr-3 font-medium">
                    Event
                  </th>
                  <th scope="col" className="py-2 pr-3 font-medium">
                    Status
                  </th>
                  <th scope="col" className="w-72 py-2 pr-3 font-medium">
                    Targets by state
                  </th>
                  <th scope="col" className="py-2 pr-3 font-medium">
                    Exactly once (P4)
                  </th>
                  <th scope="col" className="py-2 font-medium">
                    Created
                  </th>
                </tr>
              </thead>
              <tbody className="divide-y divide-zinc-100">
                {rows.map((r) => (
                  <tr key={r.id} className="hover:bg-zinc-50" data-testid="run-row">
                    <td className="py-2.5 pr-3">
                      <Link href={`/runs/${r.id}`} className="mono font-medium text-blue-700 hover:underline">
                        {r.id.slice(0, 8)}
                      </Link>
                    </td>
                    <td className="py-2.5 pr-3">{r.workflow}</td>
                    <td className="mono py-2.5 pr-3 text-xs">{r.triggerId}</td>
                    <td className="py-2.5 pr-3">
                      <RunStatus status={r.shownStatus} />
                      {r.planStatus === 'submitted' && (
                        <span className="ml-1">
                          <Badge tone="amber">plan awaiting approval</Badge>
                        </span>
                      )}
                    </td>
                    <td className="py-2.5 pr-3">
                      <StateBar counts={r.counts} total={r.planItems} />
                    </td>
                    <td className="py-2.5 pr-3">
                      <ExactlyOnce value={r.exactlyOnce} />
                    </td>
                    <td className="py-2.5 text-xs text-zinc-600">
                      <Time value={r.createdAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <div className="mt-4 flex justify-between">
          {filter.cursor ? (
            <Link href={withParams('/runs', sp, { cursor: undefined })} className={linkButton('secondary', 'sm')}>
              First page
            </Link>
          ) : (
            <span />
          )}
          {next && (
            <Link href={withParams('/runs', sp, { cursor: next })} className={linkButton('secondary', 'sm')}>
              Next page
            </Link>
          )}
        </div>
      </Card>
    </>
  );
}

function RunStatus({ status }: { status: ShownRunStatus }) {
  return (
    <span data-testid="run-status">
      <Badge tone={SHOWN_RUN_STATUS_TONE[status] ?? 'zinc'}>{status}</Badge>
    </span>
  );
}
