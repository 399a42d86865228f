import type { Metadata } from 'next';
import { requireSignedIn } from '@/lib/auth/page.ts';
import { ChangePasswordForm } from './change-password-form.tsx';

export const metadata: Metadata = { title: 'Choose a new password' };
export const dynamic = 'force-dynamic';

// Outside the console layout on purpose: while a password must be changed (Z7), every console page
// redirects here, and this page must not redirect to itself.
export default async function ChangePasswordPage() {
  const user = await requireSignedIn();
  return (
    <main id="main" tabIndex={-1} className="flex min-h-screen outline-none items-center justify-center px-4">
      <div className="w-full max-w-sm">
        <div className="mb-6 text-center">
          <h1 className="text-lg font-semibold">Choose a new password</h1>
          <p className="mt-1 text-sm text-zinc-500" data-testid="current-user">
            {user.email}
          </p>
        </div>
        <div className="rounded-lg border border-zinc-200 bg-white p-6 shadow-sm">
          {user.mustChangePassword && (
            <p role="status" className="mb-4 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900">
              Your password was set by someone else. Choose your own before you use the console.
            </p>
          )}
          <ChangePasswordForm required={user.mustChangePassword} />
        </div>
      </div>
    </main>
  );
}
