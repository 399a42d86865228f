import type { Metadata } from 'next';
import { safeCallbackUrl } from '@/lib/auth/callback-url.ts';
import { signInNotice } from '@/lib/auth/sign-in-errors.ts';
import { credentialsEnabled, oidcEnabled } from '@/lib/auth/sign-in-methods.ts';
import { SignInForm } from './sign-in-form.tsx';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const sp = await searchParams;
  // Anyone can write a link with an ?error= of their choosing: only texts the console knows are shown.
  const notice = signInNotice({ reason: sp.reason, error: sp.error });
  // Without a page to return to, the home page sends each person to where their work starts.
  const callbackUrl = safeCallbackUrl(sp.callbackUrl, '/');
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
