'use client';
// Bulk resolve on the support queue. Each row's checkbox (support/unknown-list.tsx) belongs to an
// empty form of this bar through its `form` attribute, and the bar reads the checked keys from it.
import { useEffect, useState } from 'react';
import { resolveManyAction } from '@/app/actions/ledger.ts';
import { ActionDialog } from '@/components/action-dialog.tsx';
import type { SeenEffectVersion } from '@/lib/ledger/seen-version.ts';
import { plural } from '@/lib/plural.ts';

export const BULK_FORM_ID = 'support-bulk';

interface Checked {
  keys: string[];
  /** The recipients of the checked rows, for the dialog's list. */
  targets: string[];
  /** Z8: each key's version as its row showed it (the checkbox's data-seen). */
  seen: Record<string, SeenEffectVersion>;
}

function checkedRows(): Checked {
  const checked: Checked = { keys: [], targets: [], seen: {} };
  const form = document.getElementById(BULK_FORM_ID);
  if (!(form instanceof HTMLFormElement)) return checked;
  for (const el of form.elements) {
    if (!(el instanceof HTMLInputElement) || el.name !== 'key' || !el.checked) continue;
    checked.keys.push(el.value);
    checked.targets.push(el.dataset.target ?? el.value);
    if (el.dataset.seen) checked.seen[el.value] = JSON.parse(el.dataset.seen) as SeenEffectVersion;
  }
  return checked;
}

export function SupportBulkResolve({ onPage }: { onPage: number }) {
  const [{ keys, targets, seen }, setChecked] = useState<Checked>({ keys: [], targets: [], seen: {} });
  // Mounted even with nothing left to resolve on the page, so an open dialog keeps its outcome.
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const read = () => setChecked(checkedRows());
    // A checkbox changed, or the page's rows were replaced after a decision.
    document.addEventListener('change', read);
    const observer = new MutationObserver(read);
    observer.observe(document.getElementById('main') ?? document.body, { childList: true, subtree: true });
    return () => {
      document.removeEventListener('change', read);
      observer.disconnect();
    };
  }, []);
  const n = keys.length;
  const list = (
    <ul className="max-h-40 space-y-0.5 overflow-y-auto text-xs" data-testid="bulk-targets">
      {targets.map((t, i) => (
        <li key={keys[i]} className="[overflow-wrap:anywhere]">
          {t} <span className="mono text-zinc-500">{keys[i]}</span>
        </li>
      ))}
    </ul>
  );
  const common = { onOpenChange: setOpen, preview: list };
  const summary = (r: { resolved: number; failed: unknown[] }) =>
    `${r.resolved} resolved${r.failed.length ? `, ${r.failed.length} refused (changed since this page showed them)` : ''}.`;
  return (
    <div
      role="group"
      aria-label="Resolve the selected unknowns"
      hidden={onPage === 0 && !open}
      className="mb-3 flex flex-wrap items-center gap-2 rounded-md border border-zinc-200 bg-zinc-50 px-3 py-2 text-sm"
    >
      {/* Empty: the row checkboxes join it with form="support-bulk" (a dialog's form cannot nest in it). */}
      <form id={BULK_FORM_ID} onSubmit={(e) => e.preventDefault()} hidden />
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          className="h-4 w-4"
          aria-label="Select every unknown on this page"
          checked={n > 0 && n === onPage}
          onChange={(e) => {
            const form = document.getElementById(BULK_FORM_ID) as HTMLFormElement;
            for (const el of form.elements) {
              if (el instanceof HTMLInputElement && el.name === 'key') el.checked = e.currentTarget.checked;
            }
            setChecked(checkedRows());
          }}
        />
        <span aria-live="polite" data-testid="bulk-selected">
          {n} selected
        </span>
      </label>
      <ActionDialog
        {...common}
        trigger={`Resolve ${n} as not sent`}
        disabled={n === 0}
        title={`Resolve ${plural(n, 'unknown')} as not sent`}
        description="Each key goes back to pending, unheld, and waits for the next forced replay's claim (S4). Each is its own audited decision."
        fields={[{ name: 'reason', label: 'Reason', type: 'textarea', required: true }]}
        submitLabel="Mark as not sent"
        action={resolveManyAction}
        baseInput={{ keys, seen, outcome: 'not_sent' }}
        success={summary}
        testId="bulk-not-sent"
      />
      <ActionDialog
        {...common}
        trigger={`Resolve ${n} as sent`}
        disabled={n === 0}
        title={`Resolve ${plural(n, 'unknown')} as sent`}
        description="Each key becomes done with the evidence reference below (S2, S4). Each is its own audited decision."
        fields={[
          { name: 'receipt', label: 'Evidence reference covering every selected key', required: true },
          { name: 'reason', label: 'Reason', type: 'textarea', required: true },
        ]}
        submitLabel="Mark as sent"
        action={resolveManyAction}
        baseInput={{ keys, seen, outcome: 'sent' }}
        success={summary}
        testId="bulk-sent"
      />
    </div>
  );
}
