// For server components: the signed-in user, checked against the database (Z4; a check is shared by
// the renders of the next second, ./session-cache.ts);
// anyone turned away goes where ./leave-for.ts says.
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { db, type Db } from '../db/client.ts';
import { canSomewhere, scopeOf, type WorkflowScope } from './grants.ts';
import { leaveFor } from './leave-for.ts';
import type { Permission } from '../core/permissions.ts';
import { type SessionUser } from './session.ts';
import { cachedSessionFromCookie } from './session-cache.ts';

/** `returnTo`: the console address to come back to after signing in (a page the person asked for). */
export async function requireUser(permission: Permission = 'console.read', returnTo?: string): Promise<SessionUser> {
  const user = await requireSignedIn(returnTo);
  // Z7: until a password someone else chose is replaced, every page leads to the change.
  if (user.mustChangePassword) redirect(leaveFor({ status: 403, reason: 'password_change' }));
  // Held on at least one workflow; what the page then reads is filtered to the viewer's scope (Z1).
  if (!canSomewhere(user.grants, permission)) redirect(leaveFor({ status: 403 }));
  return user;
}

/** A valid session, whether or not its password must be changed: only the change-password page uses it. */
export async function requireSignedIn(returnTo?: string): Promise<SessionUser> {
  const h = await headers();
  const session = await cachedSessionFromCookie(h.get('cookie'), db());
  if (session.problem) redirect(leaveFor({ status: 401, reason: session.problem }, returnTo));
  return session.user;
}

/** What a page reads with: the signed-in user and the database client the read models take. Pages
 *  never open a client themselves, so every read a page makes starts from a checked session. */
export interface Viewer {
  user: SessionUser;
  db: Db;
  /** The workflows the viewer holds a role in: every read model a page calls is filtered by it. */
  scope: WorkflowScope;
}

export async function requireViewer(permission: Permission = 'console.read', returnTo?: string): Promise<Viewer> {
  const user = await requireUser(permission, returnTo);
  return { user, db: db(), scope: scopeOf(user.grants) };
}

export async function optionalUser(): Promise<SessionUser | null> {
  const h = await headers();
  const session = await cachedSessionFromCookie(h.get('cookie'), db());
  return session.problem || session.user.mustChangePassword ? null : session.user;
}
