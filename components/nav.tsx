'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { signOut } from 'next-auth/react';
import { cn } from './ui/cn.ts';

export function Nav({
  links,
  user,
}: {
  links: { href: string; label: string; count?: number }[];
  user: { email: string; name: string; role: string };
}) {
  const pathname = usePathname();
  return (
    <aside className="sticky top-0 flex h-screen w-56 shrink-0 flex-col border-r border-zinc-200 bg-white">
      <div className="flex items-center gap-2 px-4 py-4">
        <div className="flex h-7 w-7 items-center justify-center rounded-md bg-zinc-900 text-[11px] font-bold text-white">
          EL
        </div>
        <span className="text-sm font-semibold">Effect Ledger</span>
      </div>
      <nav aria-label="Console" className="flex-1 space-y-0.5 px-2">
        {links.map((l) => {
          const active = pathname === l.href || pathname.startsWith(`${l.href}/`);
          return (
            <Link
              key={l.href}
              href={l.href}
              aria-current={active ? 'page' : undefined}
              className={cn(
                'block rounded-md px-3 py-1.5 text-sm',
                active ? 'bg-zinc-100 font-medium text-zinc-900' : 'text-zinc-600 hover:bg-zinc-50 hover:text-zinc-900',
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
          {user.email}
        </div>
        <div className="text-zinc-500">
          Role: <span data-testid="current-role">{user.role}</span>
        </div>
        <div className="mt-2 flex flex-wrap gap-x-3 gap-y-1">
          <button
            type="button"
            onClick={() => signOut({ callbackUrl: '/sign-in?reason=signed_out' })}
            className="text-zinc-600 underline hover:text-zinc-900"
          >
            Sign out
          </button>
          <Link href="/account/password" className="text-zinc-600 underline hover:text-zinc-900">
            Change password
          </Link>
          <Link href="/account/notifications" className="text-zinc-600 underline hover:text-zinc-900">
            Notifications
          </Link>
        </div>
      </div>
    </aside>
  );
}
