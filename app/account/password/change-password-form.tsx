'use client';
import { fieldMessage } from '@/components/field-message.ts';
import { Link } from '@/components/ui/link.tsx';
import { signOut } from 'next-auth/react';
import { useState } from 'react';
import { changePasswordAction } from '@/app/actions/account.ts';
import { Button } from '@/components/ui/button.tsx';
import { Field, inputClass } from '@/components/ui/card.tsx';

const FIELDS = [
  { name: 'currentPassword', label: 'Current password', autoComplete: 'current-password' },
  { name: 'newPassword', label: 'New password (at least 12 characters)', autoComplete: 'new-password' },
  { name: 'confirmPassword', label: 'New password again', autoComplete: 'new-password' },
] as const;

export function ChangePasswordForm({ required }: { required: boolean }) {
  const [error, setError] = useState<{ field?: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const result = await changePasswordAction(
      Object.fromEntries(FIELDS.map((f) => [f.name, String(form.get(f.name))])),
    );
    if (result.ok) {
      // The change ended every session of this person (this one too): sign in with the new password.
      await signOut({ callbackUrl: '/sign-in?reason=password_changed' });
      return;
    }
    setBusy(false);
    setError({ field: result.field, message: result.error });
  }
  const fieldError = (name: string) =>
    error && (error.field === name || (!error.field && name === 'confirmPassword'))
      ? fieldMessage(error.message, error.field)
      : null;
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate>
      {FIELDS.map((f) => (
        <Field key={f.name} label={f.label} htmlFor={f.name} error={fieldError(f.name)}>
          <input
            id={f.name}
            name={f.name}
            type="password"
            autoComplete={f.autoComplete}
            required
            aria-invalid={Boolean(fieldError(f.name))}
            className={inputClass}
          />
        </Field>
      ))}
      <Button type="submit" className="w-full" disabled={busy}>
        {busy ? 'Saving…' : 'Save the new password'}
      </Button>
      <div className="flex justify-between text-xs text-zinc-600">
        {!required && (
          <Link href="/runs" className="underline">
            Back to the console
          </Link>
        )}
        <button
          type="button"
          className="underline"
          onClick={() => signOut({ callbackUrl: '/sign-in?reason=signed_out' })}
        >
          Sign out
        </button>
      </div>
    </form>
  );
}
