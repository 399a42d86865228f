'use client';
// F4 + Z3: confirm a forced replay by typing the number of targets that will go out, with a required
// reason. The preview's set hash goes along, so a set that changed since the page was rendered is
// refused (409) with the new figures instead of sending something the operator did not see.
import { useRefreshAfterChange } from '@/components/views/use-view.ts';
import { useId, useState } from 'react';
import { requestReplayAction } from '@/app/actions/replay.ts';
import { StaleNotice } from '@/components/stale-notice.tsx';
import { Button } from '@/components/ui/button.tsx';
import { staleFactsOf, type StaleFacts } from '@/lib/ledger/seen-version.ts';
import { Field, inputClass } from '@/components/ui/card.tsx';
import { plural } from '@/lib/plural.ts';

export function RequestReplayForm({
  runId,
  willSend,
  setHash,
  fourEyes,
}: {
  runId: string;
  willSend: number;
  setHash: string;
  fourEyes: boolean;
}) {
  const id = useId();
  const refresh = useRefreshAfterChange();
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  // Z8: the set changed since the page showed it; the refreshed page carries the new count and hash.
  const [stale, setStale] = useState<StaleFacts | null>(null);

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const typed = String(form.get('confirmCount') ?? '').trim();
    if (!/^\d+$/.test(typed) || Number(typed) !== willSend) {
      setError({ message: `type ${willSend}, the number of targets that will be sent`, field: 'confirmCount' });
      return;
    }
    setBusy(true);
    setError(null);
    setStale(null);
    try {
      const result = await requestReplayAction({
        runId,
        confirmCount: Number(typed),
        setHash,
        reason: String(form.get('reason') ?? ''),
      });
      if (!result.ok && staleFactsOf(result.details)) {
        setStale(staleFactsOf(result.details));
        refresh();
      } else if (!result.ok) setError({ message: result.error, field: result.field });
      else refresh();
    } catch {
      setError({ message: 'The request did not reach the server. Check your connection and try again.' });
    } finally {
      setBusy(false);
    }
  }

  const err = (f: string) => (error?.field === f ? error.message : null);
  return (
    <form onSubmit={onSubmit} className="space-y-3" data-testid="replay-request-form">
      <p className="text-sm text-zinc-700">
        {plural(willSend, 'target')} will be sent. The set is frozen when you confirm;
        {fourEyes
          ? ' another operator must then approve it (four-eyes) before it can start.'
          : ' no second approval is configured for these tools, so it can start right away.'}
      </p>
      <Field label={`Type ${willSend} to confirm (required)`} htmlFor={`${id}-count`} error={err('confirmCount')}>
        <input
          id={`${id}-count`}
          name="confirmCount"
          inputMode="numeric"
          autoComplete="off"
          aria-required
          className={inputClass}
          data-testid="replay-confirm-count"
        />
      </Field>
      <Field label="Reason (required)" htmlFor={`${id}-reason`} error={err('reason')}>
        <textarea
          id={`${id}-reason`}
          name="reason"
          rows={2}
          aria-required
          className={inputClass}
          data-testid="replay-reason"
        />
      </Field>
      {stale && <StaleNotice facts={stale} onRetry={() => setStale(null)} />}
      {error && !['confirmCount', 'reason'].includes(error.field ?? '') && (
        <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
          {error.message}
        </p>
      )}
      <Button type="submit" disabled={busy} data-testid="replay-request">
        {fourEyes ? 'Request replay (needs a second operator)' : 'Confirm replay'}
      </Button>
    </form>
  );
}
