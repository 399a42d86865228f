export function Time({ value }: { value: Date | string | null | undefined }) {
  if (!value) return <span className="text-zinc-500">—</span>;
  const d = typeof value === 'string' ? new Date(value) : value;
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()} className="tabular-nums">
      {d.toISOString().replace('T', ' ').slice(0, 19)}
    </time>
  );
}
