'use client';
// The plan's first targets, rendered from the items' fields: as server elements each row was sent as
// its HTML and again as React payload of every cell (docs/BENCHMARKS.md, operator pages).
export interface PlanTargetRow {
  id: string;
  target: string;
  recordId: string;
  tool: string;
  action: string;
  key: string;
}

export function PlanTargets({ rows }: { rows: PlanTargetRow[] }) {
  return (
    <div className="relative overflow-x-auto">
      {/* Cell padding is set once on the table, not on each of the page's cells (smaller page). */}
      <table className="w-full text-sm [&_td]:py-1.5 [&_td]:pr-3 [&_th]:py-1.5 [&_th]:pr-3">
        <thead className="text-left text-xs uppercase tracking-wide text-zinc-500">
          <tr>
            <th className="font-medium">Target</th>
            <th className="font-medium">Record</th>
            <th className="font-medium">Action</th>
            <th className="font-medium">Key</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 text-xs">
          {rows.map((i) => (
            <tr key={i.id}>
              <td className="text-sm">{i.target}</td>
              <td className="mono">{i.recordId}</td>
              <td>
                {i.tool} · {i.action}
              </td>
              <td className="mono max-w-64 truncate text-zinc-500">{i.key}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
