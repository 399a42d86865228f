import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { emailChannelConfigured } from '@/lib/notifications/tell.ts';
import { CHANNEL_LABELS, CHANNELS, NOTIFICATION_KINDS } from '@/lib/notifications/kinds.ts';
import { preferencesOf } from '@/lib/notifications/preferences.ts';
import { PreferencesForm } from './preferences-form.tsx';

export const metadata: Metadata = { title: 'Notification settings' };
export const dynamic = 'force-dynamic';

// The person's own account, like the password page: per notification kind, in the console only,
// email too, or off. Both the inbox and the email outbox follow what is saved here.
export default async function NotificationSettingsPage() {
  const { user, db } = await requireViewer();
  const preferences = await preferencesOf(db, user.id);
  const kinds = Object.entries(NOTIFICATION_KINDS).map(([kind, spec]) => ({ kind, ...spec }));
  return (
    <main id="main" className="mx-auto max-w-2xl px-4 py-10">
      <div className="mb-6">
        <h1 className="text-lg font-semibold">Notification settings</h1>
        <p className="mt-1 text-sm text-zinc-600" data-testid="current-user">
          {user.email}
        </p>
        <p className="mt-2 text-sm text-zinc-600">
          Notifications arrive in your{' '}
          <Link href="/inbox" className="text-blue-700 underline">
            inbox
          </Link>
          {emailChannelConfigured()
            ? `; with "${CHANNEL_LABELS.email}" they are also sent to ${user.email}.`
            : '. Email is not configured on this installation, so "Email too" works like "In the console only".'}
        </p>
      </div>
      <div className="rounded-lg border border-zinc-200 bg-white p-6 shadow-sm">
        <PreferencesForm
          kinds={kinds}
          channels={CHANNELS.map((c) => ({ value: c, label: CHANNEL_LABELS[c] }))}
          initial={preferences}
        />
      </div>
      <p className="mt-4 text-xs text-zinc-600">
        <Link href="/runs" className="underline">
          Back to the console
        </Link>
      </p>
    </main>
  );
}
