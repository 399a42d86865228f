'use client';
// The replay preview's rows (F1), rendered from the rows' data. Rendered as server elements, each row
// was sent twice, as its HTML and again as about 1,100 bytes of React payload (every cell, class and
// link as elements); as data the payload holds only the row's fields, about a third of that. The
// replay page is the heaviest operator page (docs/BENCHMARKS.md, operator pages).
import { Link } from '@/components/ui/link.tsx';
import { Time } from '@/components/time.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { STATE_LABEL, type PreviewRow } from './preview-data.ts';

/** Rows as they arrive in the page's view: the time of a row's last change as ISO text. */
export function PreviewTable({ rows }: { rows: Wire<PreviewRow>[] }) {
  return (
    <div className="relative overflow-x-auto">
      {/* Cell spacing is set once on the table rather than on each cell (a smaller page). */}
      <table className="w-full text-left text-xs [&_td]:py-1 [&_td]:pr-3 [&_th]:pr-3" data-testid="replay-preview">
        <thead className="text-zinc-500">
          <tr>
            <th className="py-1">Target</th>
            <th>Record</th>
            <th>State</th>
            <th>Epoch</th>
            <th>Last changed by</th>
            <th>When</th>
            <th>Replay</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100">
          {rows.map((i) => (
            <tr key={i.itemId} data-will-send={i.willSend ? 'yes' : 'no'} data-state={i.state}>
              <td>
                <Link className="mono underline" href={`/target?key=${encodeURIComponent(i.key)}`}>
                  {i.target}
                </Link>
              </td>
              <td className="mono whitespace-nowrap">{i.recordId}</td>
              <td>
                <Badge tone={i.willSend ? 'blue' : 'zinc'}>{STATE_LABEL[i.state] ?? i.state}</Badge>
              </td>
              <td className="text-sm tabular-nums">{i.epoch}</td>
              <td>{i.changedBy ?? '—'}</td>
              <td className="whitespace-nowrap">{i.changedAt ? <Time value={i.changedAt} /> : '—'}</td>
              <td>
                {i.willSend ? <b>will be sent</b> : <span className="text-zinc-600">skipped: {i.skipReason}</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
