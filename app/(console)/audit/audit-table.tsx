'use client';
// The audit trail's rows, rendered from each entry's shown fields as the trail's view sends them
// (lib/read-models/views/audit-page.ts; the time arrives as ISO text, which <Time> reads). Rendered
// as server elements, every entry was sent twice: as HTML and again as React payload of every cell,
// class and link; as data the payload is the fields alone (docs/BENCHMARKS.md, operator pages).
import { Link } from '@/components/ui/link.tsx';
import { Time } from '@/components/time.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import type { AuditRowView } from '@/lib/read-models/views/audit-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';

const COLUMNS = ['#', 'When', 'Who', 'Action', 'Subject', 'Change', 'Why', 'Outcome', 'Where'];

export function AuditTable({ rows }: { rows: Wire<AuditRowView>[] }) {
  return (
    <div className="relative overflow-x-auto">
      <table className="w-full text-sm [&_td]:py-2 [&_td]:pr-3" data-testid="audit-table">
        <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
          <tr className="border-b border-zinc-200">
            {COLUMNS.map((h) => (
              <th key={h} scope="col" className="py-2 pr-3 font-medium">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100">
          {rows.map((r) => (
            <tr key={r.id} data-testid="audit-row" className={r.outcome === 'refused' ? 'bg-red-50/40' : undefined}>
              <td className="mono text-xs text-zinc-500">{r.id}</td>
              <td className="text-xs">
                <Time value={r.at} />
              </td>
              <td className="text-xs">
                {r.actor}
                <div className="text-zinc-500">{r.actorRole}</div>
              </td>
              <td className="font-medium">{r.action}</td>
              <td className="max-w-56 truncate text-xs" title={r.subjectId}>
                {r.subjectHref ? (
                  <Link className="underline" href={r.subjectHref}>
                    {r.subjectLabel}
                  </Link>
                ) : (
                  <span data-testid="audit-subject">{r.subjectLabel}</span>
                )}
              </td>
              <td className="text-xs">{r.change}</td>
              <td className="max-w-64 text-xs">{r.why}</td>
              <td>
                <Badge tone={r.outcome === 'ok' ? 'green' : 'red'}>{r.outcome}</Badge>
              </td>
              <td className="text-xs text-zinc-500">{r.ip}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
