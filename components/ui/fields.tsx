import { cn } from './cn.ts';

/** A JSON object (evidence, a provider's answer) as labelled fields a person reads, not raw JSON. */
export function FieldList({ value, className }: { value: unknown; className?: string }) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return <span className={cn('mono', className)}>{typeof value === 'string' ? value : JSON.stringify(value)}</span>;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  return (
    <dl className={cn('grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5', className)} data-testid="field-list">
      {entries.map(([name, v]) => (
        <div key={name} className="contents">
          <dt className="text-zinc-600">{humanize(name)}</dt>
          <dd className="min-w-0 wrap-anywhere text-zinc-900">
            {v === null || v === undefined ? (
              <span className="text-zinc-500">none</span>
            ) : typeof v === 'object' ? (
              <FieldList value={v} />
            ) : (
              String(v)
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

// checkedAt -> "checked at", settle_window -> "settle window"
function humanize(name: string): string {
  const words = name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
