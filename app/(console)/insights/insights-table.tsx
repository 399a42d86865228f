// One workflow's decision figures: per kind, its total for the range, then its periods. The approval
// rate is drawn as a plain bar (its width the rate), so a slipping workflow stands out at a glance.
import type { DecisionKind, InsightRow } from '@/lib/read-models/decision-insights.ts';
import { Card } from '@/components/ui/card.tsx';

const KIND_LABEL: Record<DecisionKind, string> = {
  bump: 'Epoch bumps (four-eyes)',
  replay: 'Replays (four-eyes)',
  plan: 'Plan approvals',
};

/** "45 s", "12 min", "3.5 h", "2.1 d": the unit a person reads a waiting time in. */
export function describeSeconds(seconds: number | null): string {
  if (seconds === null) return '–';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 36 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

function RateBar({ rate }: { rate: number | null }) {
  if (rate === null) return <span className="text-zinc-400">–</span>;
  const percent = Math.round(rate * 100);
  return (
    <span className="inline-flex items-center gap-2" data-testid="approval-rate" data-rate={rate.toFixed(4)}>
      <span aria-hidden className="inline-block h-2 w-20 overflow-hidden rounded-sm bg-zinc-200">
        <span className="block h-full bg-emerald-600" style={{ width: `${percent}%` }} />
      </span>
      <span className="tabular-nums">{percent}%</span>
    </span>
  );
}

const NUMBERS = ['requested', 'approved', 'rejected', 'expired', 'cancelled', 'open'] as const;

export function InsightsTable({ workflow, rows }: { workflow: string; rows: InsightRow[] }) {
  return (
    <Card title={workflow}>
      <div className="overflow-x-auto">
        <table className="w-full text-sm" data-testid="insights-table" data-workflow={workflow}>
          <thead>
            <tr className="border-b border-zinc-200 text-left text-xs text-zinc-500">
              <th className="py-1.5 pr-3 font-medium">Decision</th>
              <th className="py-1.5 pr-3 font-medium">Period</th>
              {NUMBERS.map((n) => (
                <th key={n} className="py-1.5 pr-3 text-right font-medium capitalize">
                  {n}
                </th>
              ))}
              <th className="py-1.5 pr-3 font-medium">Approval rate</th>
              <th className="py-1.5 pr-3 text-right font-medium">Median to decide</th>
              <th className="py-1.5 text-right font-medium">p90 to decide</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr
                key={`${r.kind}-${r.period ?? 'total'}`}
                data-testid="insights-row"
                data-kind={r.kind}
                data-period={r.period ?? 'total'}
                className={r.period === null ? 'border-t border-zinc-200 font-medium' : 'text-zinc-700'}
              >
                <td className="py-1.5 pr-3">{r.period === null ? KIND_LABEL[r.kind] : ''}</td>
                <td className="py-1.5 pr-3 tabular-nums">{r.period ?? 'whole range'}</td>
                {NUMBERS.map((n) => (
                  <td key={n} className="py-1.5 pr-3 text-right tabular-nums" data-field={n}>
                    {r[n]}
                  </td>
                ))}
                <td className="py-1.5 pr-3">
                  <RateBar rate={r.approvalRate} />
                </td>
                <td className="py-1.5 pr-3 text-right tabular-nums">{describeSeconds(r.medianSeconds)}</td>
                <td className="py-1.5 text-right tabular-nums">{describeSeconds(r.p90Seconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Card>
  );
}
