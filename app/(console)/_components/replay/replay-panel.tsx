'use client';
// One forced replay: its status, the four-eyes decision for a second operator (Z3), start, and once
// running the live progress bar (F5: sent, skipped, failed, unknown, remaining), fetched from
// /api/console/replays/:id/progress whenever the change feed reports progress, with pause / resume /
// cancel. When the status changes the server page is refreshed, so a finished replay shows its report.
import { useRefreshAfterChange } from '@/components/views/use-view.ts';
import { useRef, useState } from 'react';
import {
  approveReplayAction,
  cancelReplayAction,
  pauseReplayAction,
  rejectReplayAction,
  resumeReplayAction,
  startReplayAction,
} from '@/app/actions/replay.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import { useLiveChanges } from '@/components/live/live-refresh.tsx';
import { Badge } from '@/components/ui/badge.tsx';
import { Time } from '@/components/time.tsx';
import { PersonLink, ReplayLink } from './names.tsx';
import { ACTIVE, SEGMENTS, TONE } from './panel-styles.ts';
import { Button } from '@/components/ui/button.tsx';
import { staleFactsOf } from '@/lib/ledger/seen-version.ts';
import type { ReplayProgress } from '@/lib/replay/progress.ts';
import type { Wire } from '@/lib/wire.ts';
import { plural } from '@/lib/plural.ts';

export type ProgressView = Wire<ReplayProgress>;

type Result =
  | { ok: true; data: unknown }
  | { ok: false; error: string; field?: string; code: string; details?: Record<string, unknown> };

export function ReplayPanel({
  initial,
  viewerId,
  canControl,
  users,
}: {
  initial: ProgressView;
  viewerId: string;
  canControl: boolean;
  users: Record<string, string>;
}) {
  const refresh = useRefreshAfterChange();
  const [p, setP] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const seenStatus = useRef(initial.status);

  // A newer copy from the server (the page refreshed) replaces what this panel last fetched.
  const [served, setServed] = useState(initial);
  if (served !== initial) {
    setServed(initial);
    setP(initial);
  }

  // F5: the bar moves when the change feed says this run's replay moved (no polling); a new status
  // refreshes the server page, so a finished replay shows its report.
  const pulling = useRef<'idle' | 'busy' | 'again'>('idle');
  const pull = () => {
    if (pulling.current !== 'idle') {
      pulling.current = 'again'; // a change arrived meanwhile: fetch once more when this one is back
      return;
    }
    pulling.current = 'busy';
    fetch(`/api/console/replays/${p.replayId}/progress`, { cache: 'no-store' })
      .then(async (res) => {
        if (!res.ok) return;
        const next = (await res.json()) as ProgressView;
        setP(next);
        if (next.status !== seenStatus.current) {
          seenStatus.current = next.status;
          refresh();
        }
      })
      .catch(() => {
        // transient: the next change tries again
      })
      .finally(() => {
        const again = pulling.current === 'again';
        pulling.current = 'idle';
        if (again) pull();
      });
  };
  useLiveChanges({ runId: p.runId, topics: ['replay'] }, () => {
    if (ACTIVE.includes(p.status)) pull();
  });

  async function run(action: (input: unknown) => Promise<Result>, input: Record<string, unknown>) {
    setBusy(true);
    setError(null);
    try {
      const result = await action(input);
      if (!result.ok) {
        setError(result.error);
        // Z8: decided by someone else meanwhile: show the request as it is now.
        if (staleFactsOf(result.details)) refresh();
      } else {
        const res = await fetch(`/api/console/replays/${p.replayId}/progress`, { cache: 'no-store' });
        if (res.ok) {
          const next = (await res.json()) as ProgressView;
          seenStatus.current = next.status;
          setP(next);
        }
        refresh();
      }
    } catch {
      setError('The request did not reach the server. Check your connection and try again.');
    } finally {
      setBusy(false);
    }
  }

  const own = p.requestedById === viewerId;
  const pct = (n: number) => (p.total ? (n / p.total) * 100 : 0);
  return (
    <div
      className="scroll-mt-4 space-y-3"
      id={`replay-${p.replayId}`}
      data-testid="replay-panel"
      data-replay-id={p.replayId}
      data-status={p.status}
    >
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <ReplayLink runId={p.runId} replayId={p.replayId} />
        <Badge tone={TONE[p.status] ?? 'zinc'}>
          <span data-testid="replay-status">{p.status.replace('_', ' ')}</span>
        </Badge>
        <b>{plural(p.total, 'target')}</b>
        <span className="text-zinc-600">
          requested by <PersonLink id={p.requestedById} users={users} /> · <Time value={p.createdAt} />
        </span>
        {p.approvedById && (
          <span className="text-zinc-600">
            · approved by <PersonLink id={p.approvedById} users={users} />
          </span>
        )}
      </div>
      <div className="text-sm">Reason: {p.reason}</div>
      <div className="text-xs text-zinc-500">
        Set hash <span className="mono break-all">{p.setHash}</span>
      </div>

      <div>
        <div
          role="progressbar"
          aria-label="Replay progress"
          aria-valuemin={0}
          aria-valuemax={p.total}
          aria-valuenow={p.total - p.remaining}
          className="flex h-3 w-full overflow-hidden rounded-full bg-zinc-100 ring-1 ring-inset ring-zinc-200"
          data-testid="replay-progress"
        >
          {SEGMENTS.filter((s) => s.k !== 'remaining').map((s) => (
            <div key={s.k} className={s.bar} style={{ width: `${pct(p[s.k])}%` }} />
          ))}
        </div>
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs text-zinc-600">
          {SEGMENTS.map((s) => (
            <li key={s.k} className="flex items-center gap-1.5">
              <span aria-hidden className={`h-2 w-2 rounded-full ring-1 ring-zinc-300 ${s.bar}`} />
              {s.label}{' '}
              <span className="font-medium tabular-nums text-zinc-900" data-testid={`replay-${s.k}`}>
                {p[s.k].toLocaleString('en-US')}
              </span>
            </li>
          ))}
          <li className="tabular-nums">{Math.round(p.fraction * 100)}%</li>
        </ul>
      </div>

      {p.status === 'awaiting_approval' && p.approval && (
        <div className="rounded-md border border-amber-200 bg-amber-50 p-3 text-sm">
          Waiting for a second operator (Z3); the request expires <Time value={p.approval.expiresAt} />.
          {canControl &&
            (own ? (
              <div className="mt-2 text-xs text-zinc-600">Your request: another operator must approve it.</div>
            ) : (
              <div className="mt-2 flex flex-wrap gap-2">
                <Button
                  size="sm"
                  disabled={busy}
                  data-testid="replay-approve"
                  onClick={() =>
                    run(approveReplayAction, {
                      approvalRequestId: p.approval!.id,
                      setHash: p.setHash,
                      seenStatus: 'open',
                    })
                  }
                >
                  Approve replay of {plural(p.total, 'target')}
                </Button>
                <ActionDialog
                  trigger="Reject"
                  triggerVariant="ghost"
                  title="Reject this replay request"
                  fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
                  submitLabel="Reject"
                  submitVariant="danger"
                  action={rejectReplayAction}
                  baseInput={{ approvalRequestId: p.approval.id, seenStatus: 'open' }}
                  successMessage="Rejected."
                />
              </div>
            ))}
        </div>
      )}

      {canControl && ACTIVE.includes(p.status) && (
        <div className="flex flex-wrap gap-2">
          {p.status === 'approved' && (
            <Button
              size="sm"
              disabled={busy}
              data-testid="replay-start"
              onClick={() => run(startReplayAction, { replayId: p.replayId, seenStatus: p.status })}
            >
              Start replay
            </Button>
          )}
          {p.status === 'running' && (
            <Button
              size="sm"
              variant="secondary"
              disabled={busy}
              data-testid="replay-pause"
              onClick={() => run(pauseReplayAction, { replayId: p.replayId, seenStatus: p.status })}
            >
              Pause
            </Button>
          )}
          {p.status === 'paused' && (
            <Button
              size="sm"
              disabled={busy}
              data-testid="replay-resume"
              onClick={() => run(resumeReplayAction, { replayId: p.replayId, seenStatus: p.status })}
            >
              Resume
            </Button>
          )}
          <ActionDialog
            trigger="Cancel replay"
            triggerVariant="ghost"
            testId="replay-cancel"
            title="Cancel this replay"
            description="Targets already sent stay sent; the rest are not sent. An open approval request is cancelled too."
            fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
            submitLabel="Cancel replay"
            submitVariant="danger"
            action={cancelReplayAction}
            baseInput={{ replayId: p.replayId, seenStatus: p.status }}
            successMessage="Cancelled."
          />
        </div>
      )}
      {error && (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
          {error}
        </p>
      )}
    </div>
  );
}
