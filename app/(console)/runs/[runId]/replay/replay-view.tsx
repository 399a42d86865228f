'use client';
// The forced replay page (F1-F5, Z3): the preview of what a replay would send, the run's replays with
// their live progress and reports, and the typed-count request, read from the run's replay view and
// kept live. What the viewer may do is settled by the view (lib/read-models/views/replay-page.ts); the
// request carries the preview's set hash, so a set that moved since is refused with the new figures.
import { Link } from '@/components/ui/link.tsx';
import { RequestReplayForm } from '@/app/(console)/_components/replay/request-form.tsx';
import { exactlyOncePercent, Report } from '@/app/(console)/_components/replay/report.tsx';
import { STATE_LABEL } from '@/app/(console)/_components/replay/preview-data.ts';
import { PreviewTable } from '@/app/(console)/_components/replay/preview-table.tsx';
import { ReplayPanel } from '@/app/(console)/_components/replay/replay-panel.tsx';
import { Card, EmptyState, PageHeader, Stat } from '@/components/ui/card.tsx';
import { LiveRefresh } from '@/components/live/live-refresh.tsx';
import type { SP } from '@/components/search-params.ts';
import { PageView } from '@/components/views/page-view.tsx';
import type { ReplayPage } from '@/lib/read-models/views/replay-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';

const FILTERS = [
  ['all', 'All'],
  ['will_send', 'Will be sent'],
  ['skipped', 'Skipped'],
] as const;

export function ReplayView({ runId }: { runId: string }) {
  return <PageView<ReplayPage> view="replay" runId={runId} title="Force replay" Body={ReplayBody} />;
}

/** The page itself, drawn from its view (also what the escaping proof renders). The filter and the
 *  cursor it shows are the view's (an unknown filter reads as 'all'), not the raw search parameters. */
export function ReplayBody({ view, runId }: { view: Wire<ReplayPage>; runId: string; sp: SP }) {
  const { filter, preview, replays, users, viewerId, canRequest, canControl, activeStatus } = view;
  const href = (f: string) => `/runs/${runId}/replay${f === 'all' ? '' : `?filter=${f}`}`;

  return (
    <>
      <PageHeader
        title={
          <span>
            Force replay of run <span className="mono">{runId.slice(0, 8)}</span>
          </span>
        }
        description={
          <span>
            Sends only the approved targets that have no effect yet, or whose last one failed (F1, F2); each send claims
            through the ledger (F3).{' '}
            <Link className="underline" href={`/runs/${runId}`}>
              Back to the run
            </Link>
          </span>
        }
      />
      <LiveRefresh runId={runId} topics={['effect', 'plan', 'replay', 'approval']} />
      <div className="mb-4 grid grid-cols-2 gap-3 lg:grid-cols-4">
        <Stat label="Approved targets" value={preview.total.toLocaleString('en-US')} />
        <Stat
          label="Will be sent"
          value={<span data-testid="replay-will-send">{preview.willSend.toLocaleString('en-US')}</span>}
          hint="never sent, awaiting a claim, or failed"
        />
        <Stat
          label="Skipped"
          value={(preview.total - preview.willSend).toLocaleString('en-US')}
          hint="in flight, done, unknown, revoked or stuck (F2)"
        />
        <Stat
          label="Exactly once now (P4)"
          value={exactlyOncePercent(preview.exactlyOnce)}
          hint={preview.fourEyes ? 'four-eyes on: a second operator approves (Z3)' : 'four-eyes off for these tools'}
        />
      </div>

      {replays.length > 0 && (
        <Card
          title="Replays of this run"
          className="mb-4"
          description="Newest first. The progress updates every second while a replay runs."
        >
          <ul className="divide-y divide-zinc-100">
            {replays.map(({ progress: r, report }) => (
              <li key={r.replayId} className="py-3">
                <ReplayPanel
                  key={`${r.replayId}:${r.status}`}
                  initial={r}
                  viewerId={viewerId}
                  canControl={canControl}
                  users={users}
                />
                {report && <Report report={report} shown={view.reportRows} />}
              </li>
            ))}
          </ul>
        </Card>
      )}

      <Card title="Confirm" className="mb-4">
        {!canRequest ? (
          <p className="text-sm text-zinc-600">Only operators force replays.</p>
        ) : activeStatus ? (
          <p className="text-sm text-zinc-600">
            A replay of this run is {activeStatus.replace('_', ' ')}; finish or cancel it before requesting another.
          </p>
        ) : preview.willSend === 0 ? (
          <EmptyState title="Nothing to send">
            Every approved target is done or needs its own action first (resolve an unknown, bump an epoch).
          </EmptyState>
        ) : (
          <RequestReplayForm
            runId={runId}
            willSend={preview.willSend}
            setHash={preview.setHash}
            fourEyes={preview.fourEyes}
          />
        )}
      </Card>

      <Card
        title="Preview (F1)"
        description={
          <span>
            Every approved target with its state and who changed it last. Set hash{' '}
            <span className="mono break-all">{preview.setHash}</span>
          </span>
        }
      >
        <ul className="mb-3 flex flex-wrap gap-x-4 gap-y-1 text-sm" data-testid="replay-counts">
          {preview.counts.map(({ state, count }) => (
            <li key={state} data-state={state}>
              <Link className="underline decoration-dotted" href={href(state)}>
                {STATE_LABEL[state]}
              </Link>{' '}
              <b className="tabular-nums">{count.toLocaleString('en-US')}</b>
            </li>
          ))}
        </ul>
        <nav className="mb-3 flex gap-2 text-sm" aria-label="Filter">
          {FILTERS.map(([f, label]) => (
            <Link
              key={f}
              href={href(f)}
              aria-current={filter === f ? 'page' : undefined}
              className={filter === f ? 'font-semibold underline' : 'text-blue-700 underline'}
            >
              {label}
            </Link>
          ))}
        </nav>
        {preview.rows.length === 0 ? (
          <EmptyState title="No targets in this view" />
        ) : (
          <PreviewTable rows={preview.rows} />
        )}
        {preview.nextCursor && (
          <div className="mt-3 text-sm">
            <Link
              className="text-blue-700 underline"
              href={`/runs/${runId}/replay?filter=${filter}&after=${preview.nextCursor}`}
            >
              Next page
            </Link>
          </div>
        )}
      </Card>
    </>
  );
}
