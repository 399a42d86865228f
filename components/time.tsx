// One way to write a time everywhere in the console: "2026-12-05 09:17:12 UTC". The zone is always
// written out: operators in several countries read the same page, and the audit trail is in UTC.

/** The console's one time format, for text (titles, hints, messages). */
export function formatTime(value: Date | string): string {
  const d = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return String(value);
  return `${d.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

export function Time({ value }: { value: Date | string | null | undefined }) {
  if (!value) return <span className="text-zinc-500">—</span>;
  const d = typeof value === 'string' ? new Date(value) : value;
  return (
    <time dateTime={d.toISOString()} title={d.toISOString()} className="tabular-nums">
      {formatTime(d)}
    </time>
  );
}
