'use client';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { Button } from '@/components/ui/button.tsx';
import { Field, inputClass } from '@/components/ui/card.tsx';

export function SignInForm({ callbackUrl, oidc }: { callbackUrl: string; oidc: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function onSubmit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const result = await signIn('credentials', {
      email: String(form.get('email')),
      password: String(form.get('password')),
      redirect: false,
    });
    if (result?.ok && !result.error) {
      window.location.assign(callbackUrl);
      return;
    }
    setBusy(false);
    setError(result?.error && result.error !== 'CredentialsSignin' ? result.error : 'Email or password is not right.');
  }
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate>
      <Field label="Email" htmlFor="email">
        <input id="email" name="email" type="email" autoComplete="username" required className={inputClass} />
      </Field>
      <Field label="Password" htmlFor="password" error={error}>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          aria-invalid={Boolean(error)}
          className={inputClass}
        />
      </Field>
      <Button type="submit" className="w-full" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </Button>
      {oidc && (
        <Button type="button" variant="secondary" className="w-full" onClick={() => signIn('oidc', { callbackUrl })}>
          Sign in with single sign-on
        </Button>
      )}
    </form>
  );
}
