// A finished or cancelled replay's report on the replay page (issue 5): the figures, why targets were
// skipped, its first rows, and the CSV and JSON downloads that hold every target.
import type { ReplayReport } from '@/lib/replay/index.ts';
import { linkButton } from '@/components/ui/button.tsx';
import { Time } from '@/components/time.tsx';
import { ReplayLink } from './names.tsx';
import type { Wire } from '@/lib/read-models/views/wire.ts';

/** Exactly once (P4) as a percentage with its counts, or a dash when not measured. */
export const exactlyOncePercent = (e: { exactlyOnce: number; approved: number; ratio: number } | null) =>
  e
    ? `${(e.ratio * 100).toFixed(1)}% (${e.exactlyOnce.toLocaleString('en-US')}/${e.approved.toLocaleString('en-US')})`
    : '—';

/** A finished replay's report: what went out, what was skipped and why, and the downloads. Drawn from
 *  the page's view, where its times are ISO text. */
export function Report({ report, shown }: { report: Wire<ReplayReport>; shown: number }) {
  return (
    <div className="mt-3 rounded-md border border-zinc-200 p-3" data-testid="replay-report">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="text-sm font-semibold">
          Report of <ReplayLink runId={report.runId} replayId={report.replayId} />
        </h3>
        <div className="flex gap-2">
          {(['csv', 'json'] as const).map((format) => (
            <a
              key={format}
              href={`/api/console/replays/${report.replayId}/report?format=${format}`}
              className={linkButton('secondary', 'sm')}
              data-testid={`report-${format}`}
              download
            >
              Download {format.toUpperCase()}
            </a>
          ))}
        </div>
      </div>
      <dl className="mt-2 grid grid-cols-2 gap-2 text-sm lg:grid-cols-4">
        <div>
          <dt className="text-xs text-zinc-500">Went out</dt>
          <dd data-testid="report-sent" className="tabular-nums font-semibold">
            {report.sent}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Skipped</dt>
          <dd data-testid="report-skipped" className="tabular-nums">
            {report.skipped}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Exactly once before</dt>
          <dd data-testid="report-eo-before">{exactlyOncePercent(report.exactlyOnceBefore)}</dd>
        </div>
        <div>
          <dt className="text-xs text-zinc-500">Exactly once at its end</dt>
          <dd data-testid="report-eo-after">{exactlyOncePercent(report.exactlyOnceAfter)}</dd>
        </div>
      </dl>
      {report.sinceThen && (
        // The finished figure stays as it was; what changed on the run afterwards is its own line.
        <p className="mt-1 text-xs text-zinc-700" data-testid="report-since-then">
          Since then (changes made on the run after this replay ended): exactly once is now{' '}
          <b>{exactlyOncePercent(report.sinceThen)}</b>, as of <Time value={report.sinceThen.asOf} />.
        </p>
      )}
      <div className="mt-1 text-xs text-zinc-600">
        Failed {report.failed} · unknown {report.unknown} ·{' '}
        {report.finishedAt ? (
          <>
            finished <Time value={report.finishedAt} />
          </>
        ) : (
          'not finished'
        )}
      </div>
      {report.skippedBecause.length > 0 && (
        <div className="mt-2 text-sm">
          Skipped because:
          <ul className="ml-4 list-disc text-xs">
            {report.skippedBecause.map((s) => (
              <li key={s.reason}>
                {s.reason}: <b>{s.count}</b>
              </li>
            ))}
          </ul>
        </div>
      )}
      <details className="mt-2 text-xs">
        <summary className="cursor-pointer text-zinc-600">
          Every target of this replay ({report.total}
          {report.nextCursor ? `, first ${shown} shown; the downloads hold every target` : ''})
        </summary>
        <div className="relative overflow-x-auto">
          <table className="mt-1 w-full text-left" data-testid="report-items">
            <thead className="text-zinc-500">
              <tr>
                <th className="pr-3">Target</th>
                <th className="pr-3">Outcome</th>
                <th className="pr-3">State now</th>
                <th>Note</th>
              </tr>
            </thead>
            <tbody>
              {report.items.map((i) => (
                <tr key={i.itemId} data-outcome={i.outcome}>
                  <td className="mono pr-3">{i.target}</td>
                  <td className="pr-3">{i.outcome}</td>
                  <td className="pr-3">{i.stateNow ?? '—'}</td>
                  <td className="break-all">{i.note ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
