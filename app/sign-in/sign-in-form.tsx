'use client';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { Button } from '@/components/ui/button.tsx';
import { Field, inputClass } from '@/components/ui/card.tsx';

export function SignInForm({
  callbackUrl,
  oidc,
  credentials,
}: {
  callbackUrl: string;
  oidc: boolean;
  credentials: boolean;
}) {
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
  const sso = oidc && (
    <Button
      type="button"
      variant={credentials ? 'secondary' : 'primary'}
      className="w-full"
      onClick={() => signIn('oidc', { callbackUrl })}
    >
      Sign in with SSO
    </Button>
  );
  if (!credentials) {
    return (
      <div className="space-y-4">
        {sso || (
          <p role="alert" className="text-sm text-red-700">
            No way to sign in is configured: email and password sign-in is off and single sign-on is not set up.
          </p>
        )}
      </div>
    );
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
      {sso}
    </form>
  );
}
