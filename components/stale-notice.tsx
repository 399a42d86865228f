// The answer to a decision on a target that changed while the person looked at it (Z8): what it is
// now, what it was, who changed it and when, and one click to decide again on the new version.
import { describeStale, type StaleFacts } from '@/lib/ledger/seen-version.ts';
import { StateBadge, STATE_STYLE } from './ui/badge.tsx';
import { Button } from './ui/button.tsx';
import { Time } from './time.tsx';

const label = (state: string) => STATE_STYLE[state]?.label ?? state.charAt(0).toUpperCase() + state.slice(1);

export function StaleNotice({ facts, onRetry }: { facts: StaleFacts; onRetry?: () => void }) {
  return (
    <div role="alert" data-testid="stale-notice" className="space-y-2 rounded-md bg-amber-50 px-3 py-2 text-sm">
      <p className="text-amber-900">
        {describeStale(facts, label)}
        {facts.changedAt && (
          <>
            {' '}
            at <Time value={facts.changedAt} />
          </>
        )}
        . Nothing was changed.
      </p>
      <p className="flex flex-wrap items-center gap-2 text-xs text-zinc-700">
        Now: {STATE_STYLE[facts.now.state] ? <StateBadge state={facts.now.state} /> : <b>{label(facts.now.state)}</b>}
        {facts.now.epoch !== undefined && <span>epoch {facts.now.epoch}</span>}
        {facts.now.hash && <span className="mono break-all">set {facts.now.hash.slice(0, 12)}…</span>}
      </p>
      {onRetry ? (
        <Button type="button" size="sm" variant="secondary" data-testid="decide-again" onClick={onRetry}>
          Decide again on what it is now
        </Button>
      ) : (
        <p className="text-xs text-zinc-600">This decision no longer applies to what it is now.</p>
      )}
    </div>
  );
}
