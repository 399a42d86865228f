'use client';
// A decision dialog: preview of what changes, the fields (a reason is always required), an optional
// typed confirmation for big sets, then the server action. Native <dialog> makes the page behind it
// inert and closes on Escape; Tab cycles inside it and the focus returns to its opener on close. Errors
// come back from the server naming the field.
import { useRefreshAfterChange } from '@/components/views/use-view.ts';
import { useId, useRef, useState, type ReactNode } from 'react';
import type { ActionResult } from '@/lib/auth/guard.ts';
import { staleFactsOf, type StaleFacts } from '@/lib/ledger/seen-version.ts';
import { StaleNotice } from './stale-notice.tsx';
import { fieldMessage } from './field-message.ts';
import { Button } from './ui/button.tsx';
import { Field, inputClass } from './ui/card.tsx';

export interface FieldSpec {
  name: string;
  label: string;
  type?: 'text' | 'textarea' | 'select' | 'password' | 'email' | 'checkbox';
  options?: { value: string; label: string }[];
  required?: boolean;
  hint?: string;
  defaultValue?: string;
  placeholder?: string;
}

export function ActionDialog<T>({
  trigger,
  triggerVariant = 'secondary',
  triggerSize = 'sm',
  title,
  description,
  preview,
  fields,
  submitLabel,
  submitVariant = 'primary',
  confirmCount,
  action,
  baseInput,
  success,
  successMessage,
  disabled,
  testId,
  available,
  successDetail,
  retryInput = (facts) => facts.retry,
  onOpenChange,
  notice,
}: {
  trigger: ReactNode;
  triggerVariant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  triggerSize?: 'sm' | 'md';
  title: string;
  description?: ReactNode;
  preview?: ReactNode;
  fields: FieldSpec[];
  submitLabel: string;
  submitVariant?: 'primary' | 'danger';
  /** For big sets: the person types this number to confirm. */
  confirmCount?: number;
  /** A server action: its result type flows to `success`. */
  action: (input: Record<string, unknown>) => Promise<ActionResult<T>>;
  baseInput: Record<string, unknown>;
  success?: (data: T) => string;
  /** For server components, which cannot pass a function. */
  successMessage?: string;
  disabled?: boolean;
  testId?: string;
  /**
   * Whether the decision applies to what the page shows now. Callers that pass it keep the dialog
   * mounted whatever the state (only the trigger is hidden), so the page behind an open dialog is
   * refreshed as soon as the decision lands while the dialog keeps showing its outcome.
   */
  available?: boolean;
  /** More of the outcome, shown inside the dialog under the message (a secret shown once, say). */
  successDetail?: (data: T) => ReactNode;
  /** Z8: the input that decides again on the version a stale refusal reports (default: its `retry`). */
  retryInput?: (facts: StaleFacts) => Record<string, unknown>;
  /** Told when the dialog opens and closes: a list can keep the row of an open dialog on screen. */
  onOpenChange?: (open: boolean) => void;
  /** Shown above the fields while the dialog is open (what changed since it was opened). */
  notice?: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const refresh = useRefreshAfterChange();
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // What the person saw when they opened the dialog: a refresh behind it must not rewrite the preview.
  const [shownPreview, setShownPreview] = useState<ReactNode>(null);
  // The title as opened: "Resolve 3 unknowns" stays so after the rows it counted are resolved.
  const [shownTitle, setShownTitle] = useState(title);
  const [doneDetail, setDoneDetail] = useState<ReactNode>(null);
  // Z8: the target changed while the person looked; `retry` then decides on the version it reported.
  const [stale, setStale] = useState<StaleFacts | null>(null);
  const [retry, setRetry] = useState<Record<string, unknown>>({});
  const refreshAtOnce = available !== undefined;
  // Where the focus goes back to when the dialog closes: the control that opened it.
  const opener = useRef<HTMLElement | null>(null);

  function open() {
    setError(null);
    setDone(null);
    setDoneDetail(null);
    setStale(null);
    setRetry({});
    setShownPreview(preview ?? null);
    setShownTitle(title);
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    onOpenChange?.(true);
    ref.current?.showModal();
    // Straight to the first field (the reason), not to a scrollable preview or the Cancel button.
    ref.current?.querySelector<HTMLElement>('input:not([type=hidden]), textarea, select')?.focus();
  }

  // Tab and Shift+Tab cycle inside the open dialog instead of leaving it for the browser's own UI.
  function trapTab(e: React.KeyboardEvent<HTMLDialogElement>) {
    if (e.key !== 'Tab' || !ref.current) return;
    const focusable = [
      ...ref.current.querySelectorAll<HTMLElement>('a[href], button, input, textarea, select, [tabindex]'),
    ].filter((el) => !el.hasAttribute('disabled') && el.tabIndex >= 0 && el.getClientRects().length > 0);
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  }

  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    if (confirmCount !== undefined && String(form.get('__confirm') ?? '').trim() !== String(confirmCount)) {
      setError({ message: `type ${confirmCount} to confirm`, field: '__confirm' });
      return;
    }
    const values: Record<string, unknown> = { ...baseInput, ...retry };
    for (const f of fields) {
      if (f.type === 'checkbox') values[f.name] = form.get(f.name) === 'on';
      else {
        const v = String(form.get(f.name) ?? '');
        if (v !== '' || f.required) values[f.name] = v;
      }
    }
    setBusy(true);
    setError(null);
    setStale(null);
    try {
      const result = await action(values);
      if (result.ok) {
        // Without `available` the page refreshes when the dialog closes: refreshing now could unmount
        // the dialog (its button may vanish with the new state) before the person reads the outcome.
        setDone(success ? success(result.data) : (successMessage ?? 'Done.'));
        setDoneDetail(successDetail ? successDetail(result.data) : null);
        if (refreshAtOnce) refresh();
      } else if (staleFactsOf(result.details)) {
        // Nothing was written: show what changed, and the page behind it as it is now (where the new
        // state may remove the dialog's row, the support queue, only once the dialog closes).
        setStale(staleFactsOf(result.details));
        if (refreshAtOnce) refresh();
      } else {
        setError({ message: result.error, field: result.field });
      }
    } catch {
      setError({ message: 'The request did not reach the server. Check your connection and try again.' });
    } finally {
      setBusy(false);
    }
  }

  const fieldError = (name: string) =>
    error?.field && (error.field === name || error.field.startsWith(`${name}.`))
      ? fieldMessage(error.message, error.field)
      : null;
  const generalError =
    error && !fields.some((f) => fieldError(f.name)) && error.field !== '__confirm'
      ? fieldMessage(error.message, error.field, fields.find((f) => f.name === error.field)?.label)
      : null;

  return (
    <>
      {available !== false && (
        <Button
          type="button"
          variant={triggerVariant}
          size={triggerSize}
          disabled={disabled}
          data-testid={testId}
          onClick={open}
        >
          {trigger}
        </Button>
      )}
      <dialog
        ref={ref}
        aria-labelledby={`${id}-title`}
        onKeyDown={trapTab}
        onClose={() => {
          // Back to the opener; when it is gone (its row left the page), to the page's heading.
          if (opener.current?.isConnected) opener.current.focus();
          else document.querySelector<HTMLElement>('main h1')?.focus();
          if ((done || stale) && !refreshAtOnce) refresh();
          onOpenChange?.(false);
        }}
        className="m-auto w-[calc(100%-2rem)] max-w-lg rounded-lg border border-zinc-200 p-0 shadow-xl"
      >
        <form onSubmit={onSubmit} className="flex max-h-[85vh] flex-col">
          <div className="border-b border-zinc-100 px-5 py-4">
            <h2 id={`${id}-title`} className="text-base font-semibold">
              {shownTitle}
            </h2>
            {description && <div className="mt-1 text-sm text-zinc-600">{description}</div>}
          </div>
          <div className="space-y-4 overflow-y-auto px-5 py-4">
            {shownPreview && (
              <div className="rounded-md border border-zinc-200 bg-zinc-50 p-3 text-sm">{shownPreview}</div>
            )}
            {done ? (
              <>
                <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-900">
                  {done}
                </p>
                {doneDetail}
              </>
            ) : (
              <>
                {notice && !stale && (
                  <div role="alert" data-testid="dialog-notice" className="rounded-md bg-amber-50 px-3 py-2 text-sm">
                    {notice}
                  </div>
                )}
                {fields.map((f) => {
                  const fid = `${id}-${f.name}`;
                  const err = fieldError(f.name);
                  return (
                    <Field
                      key={f.name}
                      label={f.label + (f.required ? ' (required)' : '')}
                      htmlFor={fid}
                      error={err}
                      hint={f.hint}
                    >
                      {f.type === 'textarea' ? (
                        <textarea
                          id={fid}
                          name={f.name}
                          aria-required={f.required}
                          rows={3}
                          defaultValue={f.defaultValue}
                          placeholder={f.placeholder}
                          aria-invalid={Boolean(err)}
                          className={inputClass}
                        />
                      ) : f.type === 'select' ? (
                        <select
                          id={fid}
                          name={f.name}
                          defaultValue={f.defaultValue}
                          aria-invalid={Boolean(err)}
                          className={inputClass}
                        >
                          {f.options?.map((o) => (
                            <option key={o.value} value={o.value}>
                              {o.label}
                            </option>
                          ))}
                        </select>
                      ) : f.type === 'checkbox' ? (
                        <input
                          id={fid}
                          name={f.name}
                          type="checkbox"
                          defaultChecked={f.defaultValue === 'true'}
                          className="h-4 w-4"
                        />
                      ) : (
                        <input
                          id={fid}
                          name={f.name}
                          type={f.type ?? 'text'}
                          aria-required={f.required}
                          defaultValue={f.defaultValue}
                          placeholder={f.placeholder}
                          aria-invalid={Boolean(err)}
                          className={inputClass}
                        />
                      )}
                    </Field>
                  );
                })}
                {confirmCount !== undefined && (
                  <Field
                    label={`Type ${confirmCount} to confirm`}
                    htmlFor={`${id}-confirm`}
                    error={error?.field === '__confirm' ? error.message : null}
                  >
                    <input
                      id={`${id}-confirm`}
                      name="__confirm"
                      inputMode="numeric"
                      autoComplete="off"
                      className={inputClass}
                    />
                  </Field>
                )}
                {stale && (
                  <StaleNotice
                    facts={stale}
                    onRetry={
                      // An empty retry: the decision no longer applies to what the target is now.
                      available === false || Object.keys(retryInput(stale)).length === 0
                        ? undefined
                        : () => {
                            setRetry(retryInput(stale));
                            setStale(null);
                            setShownPreview(preview ?? null);
                          }
                    }
                  />
                )}
                {generalError && (
                  <p role="alert" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800">
                    {generalError}
                  </p>
                )}
              </>
            )}
          </div>
          <div className="flex justify-end gap-2 border-t border-zinc-100 px-5 py-3">
            <Button type="button" variant="secondary" onClick={() => ref.current?.close()}>
              {done ? 'Close' : 'Cancel'}
            </Button>
            {!done && !stale && (
              <Button type="submit" variant={submitVariant} disabled={busy}>
                {busy ? 'Working…' : submitLabel}
              </Button>
            )}
          </div>
        </form>
      </dialog>
    </>
  );
}
