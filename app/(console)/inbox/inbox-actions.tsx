'use client';
import { useRefreshAfterChange } from '@/components/views/use-view.ts';
import { useState, useTransition } from 'react';
import { markAllNotificationsReadAction, markNotificationReadAction } from '@/app/actions/notifications.ts';
import { Button } from '@/components/ui/button.tsx';

function useMark(run: () => Promise<{ ok: boolean; error?: string }>) {
  const refresh = useRefreshAfterChange();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const mark = () =>
    start(async () => {
      const r = await run();
      if (!r.ok) setError(r.error ?? 'could not mark as read');
      else {
        // The list is this page (re-rendered); the unread count in the navigation is read again.
        refresh();
      }
    });
  return { pending, error, mark };
}

export function MarkReadButton({ notificationId }: { notificationId: string }) {
  const { pending, error, mark } = useMark(() => markNotificationReadAction({ notificationId }));
  return (
    <div className="text-right">
      <Button size="sm" variant="secondary" onClick={mark} disabled={pending} data-testid="mark-read">
        Mark read
      </Button>
      {error && (
        <p role="alert" className="mt-1 text-xs text-red-700">
          {error}
        </p>
      )}
    </div>
  );
}

export function MarkAllReadButton() {
  const { pending, error, mark } = useMark(() => markAllNotificationsReadAction({}));
  return (
    <>
      <Button size="sm" variant="secondary" onClick={mark} disabled={pending} data-testid="mark-all-read">
        Mark all read
      </Button>
      {error && (
        <p role="alert" className="text-xs text-red-700">
          {error}
        </p>
      )}
    </>
  );
}
