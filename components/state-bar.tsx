import { STATE_STYLE } from './ui/badge.tsx';
import { formatTime } from './time.tsx';

const ORDER = ['done', 'pending', 'unknown', 'failed', 'stuck', 'revoked'] as const;

/** Stacked bar of per-state counts, with never-sent as the remainder up to the plan size. */
export function StateBar({
  counts,
  total,
  showLegend = false,
}: {
  counts: Record<string, number>;
  total: number;
  showLegend?: boolean;
}) {
  const claimed = ORDER.reduce((s, k) => s + (counts[k] ?? 0), 0);
  const denom = Math.max(total, claimed, 1);
  const never = Math.max(total - claimed, 0);
  const parts = [...ORDER.map((k) => ({ k, n: counts[k] ?? 0 })), { k: 'none', n: never }].filter((p) => p.n > 0);
  const summary =
    parts.map((p) => `${STATE_STYLE[p.k]!.label}: ${p.n.toLocaleString('en-US')}`).join(', ') || 'no targets';
  return (
    <div>
      <div
        role="img"
        aria-label={summary}
        title={summary}
        className="flex h-2.5 w-full min-w-32 overflow-hidden rounded-full bg-zinc-100"
      >
        {parts.map((p) => (
          <div key={p.k} className={STATE_STYLE[p.k]!.bar} style={{ width: `${(p.n / denom) * 100}%` }} />
        ))}
      </div>
      {showLegend && (
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-600">
          {parts.map((p) => (
            <li key={p.k} className="flex items-center gap-1.5">
              <span aria-hidden className={`h-2 w-2 rounded-full ${STATE_STYLE[p.k]!.bar}`} />
              {STATE_STYLE[p.k]!.label}{' '}
              <span className="font-medium tabular-nums text-zinc-900">{p.n.toLocaleString('en-US')}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function ExactlyOnce({
  value,
}: {
  value: { numerator: number; denominator: number; asOf: Date | string | null } | null;
}) {
  if (!value) return <span className="text-xs text-zinc-500">no approved plan</span>;
  const pct = value.denominator ? (value.numerator / value.denominator) * 100 : 0;
  return (
    <span
      title={`${value.numerator} of ${value.denominator} approved targets have exactly one done effect (P4)${value.asOf ? `; as of ${formatTime(value.asOf)}` : ''}`}
      className="tabular-nums"
    >
      <span className="font-semibold text-zinc-900">{pct.toFixed(1)}%</span>{' '}
      <span className="text-xs text-zinc-500">
        {value.numerator.toLocaleString('en-US')}/{value.denominator.toLocaleString('en-US')}
      </span>
    </span>
  );
}
