'use client';
import { useState } from 'react';
import { setNotificationPreferencesAction } from '@/app/actions/account.ts';
import { Button } from '@/components/ui/button.tsx';

export function PreferencesForm({
  kinds,
  channels,
  initial,
}: {
  kinds: { kind: string; label: string; who: string }[];
  channels: { value: string; label: string }[];
  initial: Record<string, string>;
}) {
  const [saved, setSaved] = useState(initial);
  const [status, setStatus] = useState<{ ok: boolean; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const preferences = Object.fromEntries(kinds.map((k) => [k.kind, String(form.get(k.kind))]));
    setBusy(true);
    setStatus(null);
    const result = await setNotificationPreferencesAction({ preferences });
    setBusy(false);
    if (result.ok) {
      setSaved(result.data);
      setStatus({ ok: true, message: 'Saved.' });
    } else setStatus({ ok: false, message: result.error });
  }
  return (
    <form onSubmit={onSubmit} className="space-y-5">
      {kinds.map((k) => (
        <fieldset key={k.kind} data-testid={`preference-${k.kind}`}>
          <legend className="text-sm font-medium text-zinc-900">{k.label}</legend>
          <p className="text-xs text-zinc-500">Sent to {k.who}.</p>
          <div className="mt-2 flex flex-wrap gap-x-4 gap-y-1">
            {channels.map((c) => (
              <label key={c.value} className="flex items-center gap-1.5 text-sm text-zinc-700">
                <input type="radio" name={k.kind} value={c.value} defaultChecked={saved[k.kind] === c.value} />
                {c.label}
              </label>
            ))}
          </div>
        </fieldset>
      ))}
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={busy} data-testid="save-preferences">
          {busy ? 'Saving…' : 'Save'}
        </Button>
        {status && (
          <p
            role={status.ok ? 'status' : 'alert'}
            className={status.ok ? 'text-sm text-emerald-700' : 'text-sm text-red-700'}
          >
            {status.message}
          </p>
        )}
      </div>
    </form>
  );
}
