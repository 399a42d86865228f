'use client';
// The console's navigation: a sidebar from the md breakpoint up; below it (a phone) a top bar whose
// Menu button folds the links out, so the page keeps the full width of the screen.
import { Link } from '@/components/ui/link.tsx';
import { usePathname } from 'next/navigation';
import { useRef, useState } from 'react';
import type { NavViewer } from '@/lib/read-models/views/viewer.ts';
import type { Wire } from '@/lib/read-models/views/wire.ts';
import { useQueryClient } from '@tanstack/react-query';
import { useNavViewer } from './views/use-view.ts';
import { signOut } from 'next-auth/react';
import { cn } from './ui/cn.ts';

/** The console's links for this person (admin pages only for those who may manage them). */
function linksFor(viewer: Wire<NavViewer> | null): { href: string; label: string; count?: number }[] {
  return [
    { href: '/inbox', label: 'Inbox', count: viewer?.unread },
    { href: '/runs', label: 'Runs' },
    { href: '/plans', label: 'Plans to approve' },
    { href: '/support', label: 'Support queue' },
    { href: '/approvals', label: 'Four-eyes approvals' },
    { href: '/insights', label: 'Decision insights' },
    { href: '/audit', label: 'Audit trail' },
    ...(viewer?.manageUsers ? [{ href: '/admin/users', label: 'Users & roles' }] : []),
    ...(viewer?.manageKeys ? [{ href: '/admin/keys', label: 'Runtime keys' }] : []),
    { href: '/admin/tools', label: 'Tool definitions' },
  ];
}

export function Nav() {
  const pathname = usePathname();
  const viewer = useNavViewer();
  const queries = useQueryClient();
  const links = linksFor(viewer);
  const [open, setOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  // A new page closes the menu (following a link, or going back).
  const [shownFor, setShownFor] = useState(pathname);
  if (shownFor !== pathname) {
    setShownFor(pathname);
    setOpen(false);
  }
  return (
    <aside
      className="sticky top-0 z-30 flex shrink-0 flex-col border-b border-zinc-200 bg-white md:h-screen md:w-56 md:border-r md:border-b-0"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          setOpen(false);
          menuButton.current?.focus();
        }
      }}
    >
      <div className="flex items-center gap-2 px-4 py-3 md:py-4">
        <div
          aria-hidden
          className="flex h-7 w-7 items-center justify-center rounded-md bg-zinc-900 text-[11px] font-bold text-white"
        >
          EL
        </div>
        <span className="text-sm font-semibold">Effect Ledger</span>
        <button
          ref={menuButton}
          type="button"
          aria-expanded={open}
          aria-controls="console-menu"
          onClick={() => setOpen((o) => !o)}
          className="ml-auto inline-flex h-9 items-center gap-2 rounded-md border border-zinc-300 px-3 text-sm font-medium text-zinc-900 md:hidden"
        >
          <svg aria-hidden viewBox="0 0 20 20" className="h-4 w-4" fill="currentColor">
            {open ? (
              <path d="M5.3 4.3 10 9l4.7-4.7 1 1L11 10l4.7 4.7-1 1L10 11l-4.7 4.7-1-1L9 10 4.3 5.3z" />
            ) : (
              <path d="M3 5h14v1.5H3zm0 4.25h14v1.5H3zM3 13.5h14V15H3z" />
            )}
          </svg>
          Menu
        </button>
      </div>
      <div
        id="console-menu"
        className={cn(
          'max-h-[calc(100vh-3.5rem)] flex-1 flex-col overflow-y-auto md:flex md:max-h-none',
          open ? 'flex' : 'hidden',
        )}
      >
        <nav aria-label="Console" className="flex-1 space-y-0.5 px-2 pb-2">
          {links.map((l) => {
            const active = pathname === l.href || pathname.startsWith(`${l.href}/`);
            return (
              <Link
                key={l.href}
                href={l.href}
                aria-current={active ? 'page' : undefined}
                className={cn(
                  'block rounded-md px-3 py-2 text-sm md:py-1.5',
                  active
                    ? 'bg-zinc-100 font-medium text-zinc-900'
                    : 'text-zinc-600 hover:bg-zinc-50 hover:text-zinc-900',
                )}
              >
                {l.label}
                {l.count ? (
                  <span
                    className="ml-2 rounded-full bg-blue-600 px-1.5 py-0.5 text-[11px] font-semibold text-white tabular-nums"
                    data-testid="nav-unread"
                  >
                    {l.count}
                    <span className="sr-only"> unread</span>
                  </span>
                ) : null}
              </Link>
            );
          })}
        </nav>
        <div className="border-t border-zinc-200 p-3 text-xs">
          <div className="truncate font-medium text-zinc-900" data-testid="current-user">
            {viewer?.email ?? '\u00a0'}
          </div>
          <div className="text-zinc-600">
            Role: <span data-testid="current-role">{viewer?.roles ?? '…'}</span>
          </div>
          <div className="mt-2 flex flex-wrap gap-x-3 gap-y-1">
            <button
              type="button"
              onClick={() => {
                // Nothing read for this person stays in the tab after they leave it.
                queries.clear();
                void signOut({ callbackUrl: '/sign-in?reason=signed_out' });
              }}
              className="inline-flex min-h-6 items-center text-zinc-600 underline hover:text-zinc-900"
            >
              Sign out
            </button>
            <Link
              href="/account/password"
              className="inline-flex min-h-6 items-center text-zinc-600 underline hover:text-zinc-900"
            >
              Change password
            </Link>
            <Link
              href="/account/notifications"
              className="inline-flex min-h-6 items-center text-zinc-600 underline hover:text-zinc-900"
            >
              Notifications
            </Link>
            <Link
              href="/account/tokens"
              className="inline-flex min-h-6 items-center text-zinc-600 underline hover:text-zinc-900"
            >
              Access tokens
            </Link>
          </div>
        </div>
      </div>
    </aside>
  );
}
