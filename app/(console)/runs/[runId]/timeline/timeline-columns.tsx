// The timeline table's columns: when, what kind, what happened, the target, who, and how long.
import { createColumnHelper, tableFeatures } from '@tanstack/react-table';
import { Badge } from '@/components/ui/badge.tsx';
import { Link } from '@/components/ui/link.tsx';
import { Time } from '@/components/time.tsx';
import type { TimelineEvent } from '@/lib/read-models/run-timeline.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';

export type TimelineRow = Wire<TimelineEvent>;

export const features = tableFeatures({});
const helper = createColumnHelper<typeof features, TimelineRow>();

export const KIND_LABEL: Record<string, string> = {
  claim: 'Claim',
  attempt: 'Provider call',
  answer: 'Provider answer',
  transition: 'State change',
  decision: 'Decision',
  replay: 'Replay',
};

const KIND_TONE: Record<string, 'zinc' | 'green' | 'red' | 'amber' | 'blue'> = {
  claim: 'blue',
  attempt: 'zinc',
  answer: 'zinc',
  transition: 'green',
  decision: 'amber',
  replay: 'red',
};

/** "850 ms", "12.4 s", "3 min 5 s", "2 h 10 min": a duration as people read it. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export const columns = helper.columns([
  helper.accessor('at', { header: 'When (UTC)', cell: ({ getValue }) => <Time value={getValue()} /> }),
  helper.accessor('kind', {
    header: 'Kind',
    cell: ({ getValue }) => (
      <Badge tone={KIND_TONE[getValue()] ?? 'zinc'}>{KIND_LABEL[getValue()] ?? getValue()}</Badge>
    ),
  }),
  helper.display({
    id: 'what',
    header: 'What',
    cell: ({ row: { original: e } }) => (
      <span className="[overflow-wrap:anywhere]">
        <span className="mono text-xs">{e.what}</span>
        {e.fromState || e.toState ? (
          <span className="text-zinc-600">
            {' '}
            {e.fromState ?? '∅'} → {e.toState ?? '∅'}
          </span>
        ) : null}
        {e.epoch !== null && e.epoch > 1 ? <span className="text-zinc-500"> · epoch {e.epoch}</span> : null}
        {e.note ? <span className="block text-xs text-zinc-500">{e.note}</span> : null}
      </span>
    ),
  }),
  helper.display({
    id: 'target',
    header: 'Target',
    cell: ({ row: { original: e } }) =>
      e.key ? (
        <Link
          className="text-blue-700 underline [overflow-wrap:anywhere]"
          href={`/target?key=${encodeURIComponent(e.key)}`}
        >
          {e.target ?? e.key}
        </Link>
      ) : (
        <span className="text-zinc-400">—</span>
      ),
  }),
  helper.display({
    id: 'who',
    header: 'Who',
    cell: ({ row: { original: e } }) => (
      <span className="[overflow-wrap:anywhere]">
        {e.who ?? '—'}
        {e.whoKind ? <span className="text-xs text-zinc-500"> ({e.whoKind})</span> : null}
      </span>
    ),
  }),
  helper.accessor('durationMs', {
    header: 'Took',
    cell: ({ getValue }) => <span className="tabular-nums">{formatDuration(getValue())}</span>,
  }),
]);
