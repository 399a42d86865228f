'use client';
// The support queue's rows, rendered from the unknowns' fields: as server elements each row was sent
// as its HTML and again as React payload of every element (docs/BENCHMARKS.md, operator pages). Each
// row's checkbox belongs to the bulk bar's form through its `form` attribute (support-bulk.tsx). The
// rows come from the support view as JSON: their times are ISO strings (Time and seenEffect take them).
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
  return (
    <ul className="divide-y divide-zinc-100">
      {rows.map((r) => (
        <li
          key={r.key}
          className="flex flex-wrap items-start justify-between gap-3 py-3"
          data-testid="unknown-row"
          data-workflow={r.workflow}
        >
          <div className="flex min-w-0 items-start gap-2 text-sm">
            {r.canResolve && (
              <input
                type="checkbox"
                name="key"
                value={r.key}
                data-seen={JSON.stringify(seenEffect({ epoch: r.epoch, state: 'unknown', changedAt: r.since }))}
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
          />
        </li>
      ))}
    </ul>
  );
}
