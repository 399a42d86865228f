'use client';
// The support queue's rows, rendered from the unknowns' fields: as server elements each row was sent
// as its HTML and again as React payload of every element (docs/BENCHMARKS.md, operator pages). Each
// row's checkbox belongs to the bulk bar's form through its `form` attribute (support-bulk.tsx). The
// rows come from the support view as JSON: their times are ISO strings (Time and seenEffect take them).
import { useEffect, useRef, useState } from 'react';
import { Link } from '@/components/ui/link.tsx';
import type { SupportRow } from '@/lib/read-models/views/support-page.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { EffectActions } from '@/app/(console)/_components/effect-actions.tsx';
import { BULK_FORM_ID } from '@/app/(console)/_components/support-bulk.tsx';
import { FieldList } from '@/components/ui/fields.tsx';
import { Time } from '@/components/time.tsx';
import { seenEffect } from '@/lib/ledger/seen-version.ts';

/** An unknown with whether this person may resolve it (support-page.ts), as it crossed the wire. */
export type UnknownListRow = Wire<SupportRow>;

export function UnknownList({ rows }: { rows: UnknownListRow[] }) {
  // Rows whose dialog is open stay on screen as they were shown, even when a live refresh drops them
  // (someone else resolved the key): the dialog, its typed text and its outcome stay with the person.
  const [held, setHeld] = useState<Record<string, UnknownListRow>>({});
  // The row the focus was last in: when that row leaves the list (resolved here or elsewhere) the
  // focus would drop to the page's body; it goes to the row now in its place, else the heading.
  const lastFocused = useRef<number | null>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const shown = withHeld(rows, held);
  useEffect(() => {
    const index = lastFocused.current;
    if (index === null || (document.activeElement && document.activeElement !== document.body)) return;
    lastFocused.current = null;
    const links = listRef.current?.querySelectorAll<HTMLElement>('[data-testid="unknown-row"] a[href]');
    (links?.[Math.min(index, links.length - 1)] ?? document.querySelector<HTMLElement>('main h1'))?.focus();
  });
  const onOpenChange = (row: UnknownListRow) => (open: boolean) => {
    if (open) setHeld((h) => ({ ...h, [row.key]: row }));
    else setHeld(({ [row.key]: _released, ...rest }) => rest);
  };
  return (
    <ul
      className="divide-y divide-zinc-100"
      ref={listRef}
      onFocus={(e) => {
        const row = (e.target as HTMLElement).closest('[data-testid="unknown-row"]');
        if (row?.parentElement) lastFocused.current = [...row.parentElement.children].indexOf(row);
      }}
      onBlur={(e) => {
        // Focus moved on to something else on the page: nothing to put back.
        if (e.relatedTarget && !listRef.current?.contains(e.relatedTarget)) lastFocused.current = null;
      }}
    >
      {shown.map(({ row: r, gone }) => (
        <li
          key={r.key}
          className="flex flex-wrap items-start justify-between gap-3 py-3"
          data-testid="unknown-row"
          data-workflow={r.workflow}
          data-gone={gone || undefined}
        >
          <div className="flex min-w-0 items-start gap-2 text-sm">
            {r.canResolve && !gone && (
              <input
                type="checkbox"
                name="key"
                value={r.key}
                data-seen={JSON.stringify(seenEffect({ epoch: r.epoch, state: 'unknown', changedAt: r.since }))}
                data-target={r.target}
                form={BULK_FORM_ID}
                aria-label={`Select ${r.target}`}
                className="mt-1 h-4 w-4 shrink-0"
              />
            )}
            <div className="min-w-0">
              <Link
                href={`/target?key=${encodeURIComponent(r.key)}`}
                className="font-medium text-blue-700 hover:underline"
              >
                {r.target}
              </Link>
              <div className="text-xs text-zinc-500">
                {r.tool} · {r.action} · epoch {r.epoch} · unknown since <Time value={r.since} /> · set by {r.changedBy}{' '}
                · run{' '}
                <Link href={`/runs/${r.runId}`} className="mono underline">
                  {r.runId.slice(0, 8)}
                </Link>
              </div>
              <div className="mt-1 text-xs">
                {r.evidence ? (
                  <div data-testid="evidence">
                    What reconciliation found ({r.evidenceBy}, <Time value={r.evidenceAt} />
                    ):
                    <FieldList value={r.evidence} className="mt-1 rounded bg-zinc-50 px-2 py-1" />
                  </div>
                ) : (
                  <span className="text-zinc-500">No reconciliation evidence yet.</span>
                )}
              </div>
            </div>
          </div>
          <EffectActions
            effectKey={r.key}
            target={r.target}
            state="unknown"
            epoch={r.epoch}
            changedBy={r.changedBy}
            changedAt={r.since}
            canResolve={r.canResolve}
            canRevoke={false}
            canBump={false}
            refreshBehind={false}
            onOpenChange={onOpenChange(r)}
            gone={gone}
          />
        </li>
      ))}
    </ul>
  );
}

/** The view's rows with the held ones that left it, each where it was (next to its old neighbour). */
function withHeld(
  rows: UnknownListRow[],
  held: Record<string, UnknownListRow>,
): { row: UnknownListRow; gone: boolean }[] {
  const out = rows.map((row) => ({ row, gone: false }));
  const inView = new Set(rows.map((r) => r.key));
  for (const row of Object.values(held)) {
    if (inView.has(row.key)) continue;
    // Oldest first, as the queue: the held row goes before the first row that became unknown later.
    const at = out.findIndex((o) => o.row.since > row.since);
    out.splice(at === -1 ? out.length : at, 0, { row, gone: true });
  }
  return out;
}
