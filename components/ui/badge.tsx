import type { ReactNode } from 'react';
import { cn } from './cn.ts';

export const STATE_STYLE: Record<string, { label: string; badge: string; bar: string; hint: string }> = {
  pending: {
    label: 'Pending',
    badge: 'bg-amber-50 text-amber-800 ring-amber-600/30',
    bar: 'bg-amber-400',
    hint: 'claimed or awaiting its claim; not confirmed sent',
  },
  done: {
    label: 'Done',
    badge: 'bg-emerald-50 text-emerald-800 ring-emerald-600/30',
    bar: 'bg-emerald-500',
    hint: 'sent, with a provider receipt',
  },
  failed: {
    label: 'Failed',
    badge: 'bg-zinc-100 text-zinc-700 ring-zinc-500/30',
    bar: 'bg-zinc-400',
    hint: 'definitively rejected; the next claim may proceed',
  },
  unknown: {
    label: 'Unknown',
    badge: 'bg-purple-50 text-purple-800 ring-purple-600/30',
    bar: 'bg-purple-500',
    hint: 'outcome unknown; support must resolve it',
  },
  revoked: {
    label: 'Revoked',
    badge: 'bg-red-50 text-red-800 ring-red-600/30',
    bar: 'bg-red-500',
    hint: 'revoked by a person or a deletion',
  },
  stuck: {
    label: 'Stuck',
    badge: 'bg-orange-50 text-orange-900 ring-orange-600/40',
    bar: 'bg-orange-600',
    hint: 'issued but permanently uncompletable',
  },
  none: {
    label: 'Never sent',
    badge: 'bg-white text-zinc-600 ring-zinc-300 border-dashed',
    bar: 'bg-zinc-200',
    hint: 'approved, no effect claimed yet',
  },
};

export function StateBadge({ state }: { state: string | null }) {
  const s = STATE_STYLE[state ?? 'none'] ?? STATE_STYLE.none!;
  return (
    <span
      title={s.hint}
      data-state={state ?? 'none'}
      className={cn(
        'inline-flex items-center gap-1 whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset',
        s.badge,
      )}
    >
      <span aria-hidden className={cn('h-1.5 w-1.5 rounded-full', s.bar)} />
      {s.label}
    </span>
  );
}

export function Badge({
  children,
  tone = 'zinc',
}: {
  children: ReactNode;
  tone?: 'zinc' | 'green' | 'red' | 'amber' | 'blue';
}) {
  const tones = {
    zinc: 'bg-zinc-100 text-zinc-700 ring-zinc-500/20',
    green: 'bg-emerald-50 text-emerald-800 ring-emerald-600/30',
    red: 'bg-red-50 text-red-800 ring-red-600/30',
    amber: 'bg-amber-50 text-amber-800 ring-amber-600/30',
    blue: 'bg-blue-50 text-blue-800 ring-blue-600/30',
  };
  return (
    <span
      className={cn(
        'inline-flex items-center rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset',
        tones[tone],
      )}
    >
      {/* One flex item: text and elements inside keep their spaces ("verified 6 s ago up to"). */}
      <span>{children}</span>
    </span>
  );
}
