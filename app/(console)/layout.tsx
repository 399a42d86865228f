import type { ReactNode } from 'react';
import { requireUser } from '@/lib/auth/page.ts';
import { navUnreadCount } from '@/lib/notifications/inbox.ts';
import { canOn, grantsSummary } from '@/lib/auth/grants.ts';
import { Nav } from '@/components/nav.tsx';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const user = await requireUser();
  const links = [
    { href: '/inbox', label: 'Inbox', count: await navUnreadCount(user.id) },
    { href: '/runs', label: 'Runs' },
    { href: '/plans', label: 'Plans to approve' },
    { href: '/support', label: 'Support queue' },
    { href: '/approvals', label: 'Four-eyes approvals' },
    { href: '/audit', label: 'Audit trail' },
    ...(canOn(user.grants, 'users.manage', null) ? [{ href: '/admin/users', label: 'Users & roles' }] : []),
    ...(canOn(user.grants, 'runtime_keys.manage', null) ? [{ href: '/admin/keys', label: 'Runtime keys' }] : []),
    { href: '/admin/tools', label: 'Tool definitions' },
  ];
  return (
    <div className="flex min-h-screen flex-col md:flex-row">
      <Nav links={links} user={{ email: user.email, name: user.name, role: grantsSummary(user.grants) }} />
      <main id="main" tabIndex={-1} className="min-w-0 flex-1 px-4 py-5 outline-none sm:px-6 sm:py-6 lg:px-8">
        {children}
      </main>
    </div>
  );
}
