// The person a console view is shown to, as the navigation needs them: who they are, their roles in
// a line, which admin pages they may open, and how many notifications they have not read. Every
// view answer carries it, so the navigation stays current on each page without asking separately.
import type { Db } from '@/lib/db/client.ts';
import { canOn, grantsSummary } from '@/lib/auth/grants.ts';
import type { Guarded } from '@/lib/auth/guard.ts';
import type { SessionUser } from '@/lib/auth/session.ts';
import { unreadCount } from '@/lib/notifications/inbox.ts';

export interface NavViewer {
  email: string;
  name: string;
  roles: string;
  unread: number;
  manageUsers: boolean;
  manageKeys: boolean;
}

export async function navViewer(db: Db, user: SessionUser): Promise<NavViewer> {
  return {
    email: user.email,
    name: user.name,
    roles: grantsSummary(user.grants),
    unread: await unreadCount(db, user.id),
    manageUsers: canOn(user.grants, 'users.manage', null),
    manageKeys: canOn(user.grants, 'runtime_keys.manage', null),
  };
}

/** What a console view reads with: the signed-in person, their workflow scope (every read is filtered
 *  by it, Z1) and the database client. */
export type ConsoleViewer = Pick<Guarded, 'db' | 'user' | 'scope'>;
