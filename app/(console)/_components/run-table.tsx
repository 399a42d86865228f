'use client';
// The run's plan joined with the ledger (P3), on TanStack Table v9 in manual mode: the server does
// the keyset pagination, sorting and filtering; page, sort and filters live in the URL.
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useMemo, useState } from 'react';
import { useTable, type RowSelectionState, type SortingState } from '@tanstack/react-table';
import { requestBumpAction, revokeAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { StateBadge, STATE_STYLE } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { EmptyState, inputClass } from '@/components/ui/card.tsx';
import { cn } from '@/components/ui/cn.ts';
import { columns, features, type Row } from './run-table-columns.tsx';
import { seenEffect } from '@/lib/ledger/seen-version.ts';
import { BUMPABLE_STATES, EFFECT_STATES, REVOCABLE_STATES } from '@/lib/ledger/transitions.ts';
import { plural } from '@/lib/plural.ts';

const VIEWS = [
  { id: 'plan', label: 'Plan + ledger' },
  { id: 'never_sent', label: 'Approved but never sent' },
  { id: 'not_in_plan', label: 'Sent but not in the plan' },
];

export function RunTable({
  rows,
  next,
  canRevoke,
  canBump,
  planApproved,
}: {
  rows: Row[];
  next: string | null;
  canRevoke: boolean;
  canBump: boolean;
  /** The plan is approved: a target nobody claimed yet may be revoked before a replay (S5). */
  planApproved: boolean;
}) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const [selection, setSelection] = useState<RowSelectionState>({});
  // New rows from the server (a live change, a decision): a checked row stays checked only while it
  // is unchanged; one that moved (or left the page) is unchecked, so no decision goes out on it unseen.
  const [rowsShown, setRowsShown] = useState(rows);
  if (rowsShown !== rows) {
    const before = new Map(rowsShown.map((r) => [r.key, r]));
    const same = (r: Row) => {
      const was = before.get(r.key);
      return was !== undefined && was.state === r.state && was.epoch === r.epoch && was.changedAt === r.changedAt;
    };
    setRowsShown(rows);
    setSelection((old) => Object.fromEntries(rows.filter((r) => old[r.key] && same(r)).map((r) => [r.key, true])));
  }
  const sort = params.get('sort') === '-target' ? '-target' : 'target';
  const sorting: SortingState = [{ id: 'target', desc: sort === '-target' }];
  const view = params.get('view') ?? 'plan';

  const go = (changes: Record<string, string | undefined>) => {
    const p = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v) p.set(k, v);
      else p.delete(k);
    }
    if (!('cursor' in changes)) p.delete('cursor');
    setSelection({});
    router.push(`${pathname}?${p.toString()}`);
  };

  // A row is selectable only for a decision this person may take on it; without any, no checkboxes.
  const isRevocable = (r: Row) =>
    r.state === null ? r.inPlan && planApproved : (REVOCABLE_STATES as readonly string[]).includes(r.state);
  const isBumpable = (r: Row) => (BUMPABLE_STATES as readonly string[]).includes(r.state ?? '');
  const actionable = (r: Row) => (canRevoke && isRevocable(r)) || (canBump && isBumpable(r));
  const selectable = canRevoke || canBump;
  const table = useTable({
    features,
    columns: selectable ? columns : columns.filter((c) => c.id !== 'select'),
    data: rows,
    getRowId: (r) => r.key,
    manualSorting: true,
    enableRowSelection: (row) => actionable(row.original),
    state: { sorting, rowSelection: selection },
    onSortingChange: (updater) => {
      const nextSort = typeof updater === 'function' ? updater(sorting) : updater;
      go({ sort: nextSort[0]?.desc ? '-target' : undefined });
    },
    onRowSelectionChange: (updater) => setSelection((old) => (typeof updater === 'function' ? updater(old) : updater)),
  });

  const selected = useMemo(() => rows.filter((r) => selection[r.key]), [rows, selection]);
  const byState = selected.reduce<Record<string, number>>(
    (acc, r) => ({ ...acc, [r.state ?? 'none']: (acc[r.state ?? 'none'] ?? 0) + 1 }),
    {},
  );
  const previewText = Object.entries(byState)
    .map(([s, n]) => `${n} ${STATE_STYLE[s]?.label ?? s}`)
    .join(', ');
  const revocable = selected.filter(isRevocable);
  const bumpable = selected.filter(isBumpable);
  // Z8: each key goes with the version this table showed; a key that moved since is refused, not acted on.
  const seenOf = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.key, seenEffect(r)]));

  return (
    <div>
      <div role="tablist" aria-label="Views" className="mb-3 flex flex-wrap gap-1 border-b border-zinc-200">
        {VIEWS.map((v) => (
          <button
            key={v.id}
            role="tab"
            type="button"
            aria-selected={view === v.id}
            onClick={() => go({ view: v.id === 'plan' ? undefined : v.id, state: undefined })}
            className={cn(
              '-mb-px border-b-2 px-3 py-2 text-sm',
              view === v.id
                ? 'border-zinc-900 font-medium text-zinc-900'
                : 'border-transparent text-zinc-500 hover:text-zinc-800',
            )}
          >
            {v.label}
          </button>
        ))}
      </div>
      {/* Keyed by the address's filter: after Back the inputs show the filter of the rows shown. */}
      <form
        key={`${view}|${params.get('q') ?? ''}|${params.get('state') ?? ''}`}
        className="mb-3 flex flex-wrap items-end gap-3"
        role="search"
        aria-label="Filter targets"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          go({ q: String(f.get('q') ?? '') || undefined, state: String(f.get('state') ?? '') || undefined });
        }}
      >
        <label className="text-xs font-medium text-zinc-700">
          Target starts with
          <input
            name="q"
            defaultValue={params.get('q') ?? ''}
            placeholder="ana@"
            className={`${inputClass} mt-1 w-64`}
          />
        </label>
        {view !== 'never_sent' && (
          <label className="text-xs font-medium text-zinc-700">
            State
            <select name="state" defaultValue={params.get('state') ?? ''} className={`${inputClass} mt-1`}>
              <option value="">Any</option>
              {EFFECT_STATES.map((s) => (
                <option key={s} value={s}>
                  {STATE_STYLE[s]!.label}
                </option>
              ))}
            </select>
          </label>
        )}
        <button type="submit" className={linkButton('primary', 'sm')}>
          Apply
        </button>
      </form>

      {selected.length > 0 && (
        <div
          className="mb-3 flex flex-wrap items-center gap-2 rounded-md border border-blue-200 bg-blue-50 px-3 py-2 text-sm"
          aria-live="polite"
        >
          <span className="font-medium">{selected.length} selected</span>
          <span className="text-zinc-600">({previewText})</span>
          {canRevoke && (
            <ActionDialog
              trigger={`Revoke ${revocable.length}`}
              triggerVariant="danger"
              disabled={revocable.length === 0}
              title={`Revoke ${plural(revocable.length, 'target')}`}
              description="Revoked keys are never sent again at this epoch; they stay visible with who revoked them and why (S5)."
              preview={<PreviewList rows={revocable} skipped={selected.length - revocable.length} to="revoked" />}
              fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
              confirmCount={revocable.length >= 20 ? revocable.length : undefined}
              submitLabel="Revoke"
              submitVariant="danger"
              action={revokeAction}
              baseInput={{ keys: revocable.map((r) => r.key), seen: seenOf(revocable) }}
              success={(r) =>
                `${r.revoked} revoked${r.failed.length ? `, ${r.failed.length} refused (state changed)` : ''}.`
              }
            />
          )}
          {canBump && (
            <ActionDialog
              trigger={`Bump epoch ${bumpable.length}`}
              disabled={bumpable.length === 0}
              title={`Bump the epoch of ${plural(bumpable.length, 'target')}`}
              description="A new epoch (pending) supersedes a done, revoked or stuck one, so the next forced replay sends again (E2). Four-eyes: another operator must approve."
              preview={<PreviewList rows={bumpable} skipped={selected.length - bumpable.length} to="new epoch" />}
              fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
              confirmCount={bumpable.length >= 20 ? bumpable.length : undefined}
              submitLabel="Request bump"
              action={requestBumpAction}
              baseInput={{ keys: bumpable.map((r) => r.key), seen: seenOf(bumpable) }}
              success={(r) =>
                r.mode === 'requested'
                  ? `Requested: ${plural(r.count, 'key')} ${r.count === 1 ? 'awaits' : 'await'} another operator's approval on the Four-eyes page.`
                  : `${r.bumped} bumped.`
              }
            />
          )}
        </div>
      )}

      {rows.length === 0 ? (
        <EmptyState
          title={
            view === 'never_sent'
              ? 'Every approved target has an effect'
              : view === 'not_in_plan'
                ? 'Nothing was sent outside the plan'
                : 'No target matches'
          }
        >
          {params.get('q') || params.get('state') ? 'Clear the search or the state filter.' : null}
        </EmptyState>
      ) : (
        <div className="relative overflow-x-auto rounded-md border border-zinc-200">
          {/* Cell padding is set once on the table rather than on each cell (a smaller page). */}
          <table className="w-full text-sm [&_td]:px-3 [&_td]:py-2" data-testid="run-table">
            <thead className="bg-zinc-50 text-left text-xs uppercase tracking-wide text-zinc-500">
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => (
                    <th
                      key={header.id}
                      scope="col"
                      className="px-3 py-2 font-medium"
                      aria-sort={
                        header.column.getCanSort()
                          ? header.column.getIsSorted() === 'desc'
                            ? 'descending'
                            : 'ascending'
                          : undefined
                      }
                    >
                      {header.column.getCanSort() ? (
                        <button
                          type="button"
                          onClick={header.column.getToggleSortingHandler()}
                          className="inline-flex items-center gap-1 uppercase hover:text-zinc-900"
                        >
                          <table.FlexRender header={header} />
                          <span aria-hidden>{header.column.getIsSorted() === 'desc' ? '↓' : '↑'}</span>
                        </button>
                      ) : (
                        <table.FlexRender header={header} />
                      )}
                    </th>
                  ))}
                </tr>
              ))}
            </thead>
            <tbody className="divide-y divide-zinc-100 bg-white">
              {table.getRowModel().rows.map((row) => (
                <tr
                  key={row.id}
                  data-testid="target-row"
                  data-state={row.original.state ?? 'none'}
                  className={row.getIsSelected() ? 'bg-blue-50/60' : 'hover:bg-zinc-50'}
                >
                  {row.getAllCells().map((cell) => (
                    <td key={cell.id}>
                      <table.FlexRender cell={cell} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="mt-3 flex justify-between">
        {params.get('cursor') ? (
          <button type="button" className={linkButton('secondary', 'sm')} onClick={() => go({ cursor: undefined })}>
            First page
          </button>
        ) : (
          <span />
        )}
        {next && (
          <button type="button" className={linkButton('secondary', 'sm')} onClick={() => go({ cursor: next })}>
            Next page
          </button>
        )}
      </div>
    </div>
  );
}

function PreviewList({ rows, skipped, to }: { rows: Row[]; skipped: number; to: string }) {
  return (
    <div>
      <p className="mb-2 font-medium">
        {rows.length} will move to {to}
        {skipped > 0
          ? `; ${plural(skipped, 'selected target')} ${skipped === 1 ? 'is' : 'are'} skipped (their state does not allow it)`
          : ''}
        .
      </p>
      <ul className="max-h-40 space-y-1 overflow-y-auto text-xs">
        {rows.slice(0, 50).map((r) => (
          <li key={r.key} className="flex items-center justify-between gap-2">
            <span className="truncate">{r.target}</span>
            <span className="flex items-center gap-1">
              {r.epoch === null ? 'not claimed yet' : `epoch ${r.epoch}`} <StateBadge state={r.state} />{' '}
              {r.changedBy ? `by ${r.changedBy}` : ''}
            </span>
          </li>
        ))}
        {rows.length > 50 && <li className="text-zinc-500">…and {rows.length - 50} more</li>}
      </ul>
    </div>
  );
}
