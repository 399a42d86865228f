// The run table's columns (P3): the selection box, the target with its link, the record, the action,
// the key, the epoch, the state and who changed it last, when. Split from run-table.tsx, which holds the
// table's views, filters, selection and bulk actions.
import { Link } from '@/components/ui/link.tsx';
import { createColumnHelper, rowSelectionFeature, rowSortingFeature, tableFeatures } from '@tanstack/react-table';
import { StateBadge } from '@/components/ui/badge.tsx';
import { Time } from '@/components/time.tsx';
import type { RunTableRow } from '@/lib/read-models/run-detail.ts';
import type { Wire } from '@/lib/wire.ts';

export type Row = Wire<RunTableRow>;

export const features = tableFeatures({ rowSortingFeature, rowSelectionFeature });
const helper = createColumnHelper<typeof features, Row>();
const targetHref = (key: string) => `/target?key=${encodeURIComponent(key)}`;

export const columns = helper.columns([
  helper.display({
    id: 'select',
    header: ({ table }) => (
      <input
        type="checkbox"
        aria-label="Select all rows on this page"
        className="h-4 w-4"
        checked={table.getIsAllRowsSelected()}
        onChange={table.getToggleAllRowsSelectedHandler()}
      />
    ),
    cell: ({ row }) => (
      <input
        type="checkbox"
        aria-label={`Select ${row.original.target}`}
        className="h-4 w-4"
        disabled={!row.getCanSelect()}
        checked={row.getIsSelected()}
        onChange={row.getToggleSelectedHandler()}
      />
    ),
    enableSorting: false,
  }),
  helper.accessor('target', {
    header: 'Target',
    cell: (c) => (
      <Link href={targetHref(c.row.original.key)} className="font-medium text-blue-700 hover:underline">
        {c.getValue()}
      </Link>
    ),
  }),
  helper.accessor('recordId', {
    header: 'Record',
    enableSorting: false,
    cell: (c) => <span className="mono text-xs">{c.getValue()}</span>,
  }),
  helper.accessor('action', {
    header: 'Action',
    enableSorting: false,
    cell: (c) => (
      <span className="text-xs">
        {c.row.original.tool} · {c.getValue()}
      </span>
    ),
  }),
  helper.accessor('key', {
    header: 'Key',
    enableSorting: false,
    cell: (c) => (
      <span className="mono block max-w-48 truncate text-xs text-zinc-500" title={c.getValue()}>
        {c.getValue()}
      </span>
    ),
  }),
  helper.accessor('epoch', {
    header: 'Epoch',
    enableSorting: false,
    cell: (c) => <span className="tabular-nums">{c.getValue() ?? '—'}</span>,
  }),
  helper.accessor('state', { header: 'State', enableSorting: false, cell: (c) => <StateBadge state={c.getValue()} /> }),
  helper.accessor('changedBy', {
    header: 'Last changed by',
    enableSorting: false,
    cell: (c) => <span className="text-xs">{c.getValue() ?? '—'}</span>,
  }),
  helper.accessor('changedAt', {
    header: 'When',
    enableSorting: false,
    cell: (c) => (
      <span className="text-xs tabular-nums text-zinc-600">
        <Time value={c.getValue()} />
      </span>
    ),
  }),
]);
