import type { Metadata } from 'next';
import { Link } from '@/components/ui/link.tsx';
import { requireViewer } from '@/lib/auth/page.ts';
import { inbox, INBOX_PAGE_SIZE } from '@/lib/notifications/inbox.ts';
import { NOTIFICATION_KINDS } from '@/lib/notifications/kinds.ts';
import { one, type SP } from '@/components/search-params.ts';
import { Badge } from '@/components/ui/badge.tsx';
import { linkButton } from '@/components/ui/button.tsx';
import { Card, EmptyState, PageHeader } from '@/components/ui/card.tsx';
import { Time } from '@/components/time.tsx';
import { MarkAllReadButton, MarkReadButton } from './inbox-actions.tsx';

export const metadata: Metadata = { title: 'Inbox' };

// The signed-in person's notifications: four-eyes requests waiting for them, decisions on their own
// requests, the end of their replays. Which kinds arrive, and by email too, is set on the account page.
// A page at a time, newest first (keyset cursors in ?before= and ?after=).
export default async function InboxPage({ searchParams }: { searchParams: Promise<SP> }) {
  const [sp, { user, db }] = await Promise.all([searchParams, requireViewer()]);
  const { items, unread, newer, older } = await inbox(db, user.id, {
    before: one(sp, 'before'),
    after: one(sp, 'after'),
  });
  return (
    <>
      <PageHeader
        title="Inbox"
        description={
          <>
            What needs you and what happened to your requests. Choose what you are told, and whether by email too, in{' '}
            <Link href="/account/notifications" className="text-blue-700 underline">
              notification settings
            </Link>
            .
          </>
        }
        actions={unread > 0 ? <MarkAllReadButton /> : undefined}
      />
      <Card
        title={`${unread} unread`}
        description={newer || older ? `Newest first, ${INBOX_PAGE_SIZE} a page.` : undefined}
      >
        {items.length === 0 ? (
          <EmptyState title="Nothing here yet">
            You are told here when a four-eyes request waits for you, when your own request is decided or expires, and
            when a replay you asked for ends.
          </EmptyState>
        ) : (
          <ul className="divide-y divide-zinc-100" aria-label="Notifications">
            {items.map((n) => (
              <li
                key={n.id}
                className="flex flex-wrap items-start justify-between gap-3 py-3"
                data-testid="notification"
                data-read={n.readAt ? 'yes' : 'no'}
              >
                <div className="min-w-0 text-sm">
                  <div className="flex flex-wrap items-center gap-2">
                    {!n.readAt && <Badge tone="blue">new</Badge>}
                    {n.readAt ? (
                      <Link href={n.link} className="text-zinc-700 underline">
                        {n.title}
                      </Link>
                    ) : (
                      // Through the open route, which marks it read on the server before leading on; a plain
                      // link (no prefetch, a full navigation), so the navigation's count is fresh on arrival.
                      <a href={`/inbox/open/${n.id}`} className="font-semibold underline">
                        {n.title}
                      </a>
                    )}
                  </div>
                  <p className="mt-1 break-words text-zinc-600">{n.body}</p>
                  <p className="mt-1 text-xs text-zinc-500">
                    {NOTIFICATION_KINDS[n.kind]?.label ?? n.kind} · <Time value={n.createdAt} />
                  </p>
                </div>
                {!n.readAt && <MarkReadButton notificationId={n.id} />}
              </li>
            ))}
          </ul>
        )}
        {(newer || older) && (
          <nav aria-label="Pages of notifications" className="mt-3 flex justify-between">
            {newer ? (
              <Link href={`/inbox?after=${newer}`} className={linkButton('secondary', 'sm')}>
                Previous page
              </Link>
            ) : (
              <span />
            )}
            {older && (
              <Link href={`/inbox?before=${older}`} className={linkButton('secondary', 'sm')}>
                Next page
              </Link>
            )}
          </nav>
        )}
      </Card>
    </>
  );
}
