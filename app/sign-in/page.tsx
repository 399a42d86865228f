import type { Metadata } from 'next';
import { OIDC_REFUSAL_MESSAGES } from '@/lib/auth/oidc-sign-in.ts';
import { safeCallbackUrl } from '@/lib/auth/callback-url.ts';
import { credentialsEnabled, oidcEnabled } from '@/lib/auth/sign-in-methods.ts';
import { SignInForm } from './sign-in-form.tsx';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

const REASONS: Record<string, string> = {
  no_session: '',
  session_revoked: 'Your session ended because your account or role changed. Sign in again.',
  disabled: 'This account is disabled. Ask an admin.',
  unknown_user: 'This account no longer exists.',
  signed_out: 'You are signed out.',
  password_changed: 'Your password is changed. Sign in with the new one.',
  ...OIDC_REFUSAL_MESSAGES,
  // next-auth's own codes for a single sign-on that failed before this console could decide.
  OAuthSignin: 'Single sign-on could not start: the identity provider did not answer. Try again or ask an admin.',
  OAuthCallback: 'Single sign-on did not complete (the identity provider refused or the answer did not verify).',
  AccessDenied: 'Single sign-on was refused.',
  sso_unavailable: 'Single sign-on could not be completed right now. Try again in a moment.',
};

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const sp = await searchParams;
  const notice =
    REASONS[sp.reason ?? ''] || (sp.error && sp.error !== 'CredentialsSignin' ? (REASONS[sp.error] ?? sp.error) : '');
  const callbackUrl = safeCallbackUrl(sp.callbackUrl);
  return (
    <main id="main" tabIndex={-1} className="flex min-h-screen outline-none items-center justify-center px-4">
      <div className="w-full max-w-sm">
        <div className="mb-6 text-center">
          <div className="mx-auto mb-3 flex h-10 w-10 items-center justify-center rounded-lg bg-zinc-900 text-sm font-bold text-white">
            EL
          </div>
          <h1 className="text-lg font-semibold">Sign in to Effect Ledger</h1>
          <p className="mt-1 text-sm text-zinc-500">Operator console</p>
        </div>
        <div className="rounded-lg border border-zinc-200 bg-white p-6 shadow-sm">
          {notice && (
            <p role="status" className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
              {notice}
            </p>
          )}
          <SignInForm callbackUrl={callbackUrl} oidc={oidcEnabled()} credentials={credentialsEnabled()} />
        </div>
      </div>
    </main>
  );
}
