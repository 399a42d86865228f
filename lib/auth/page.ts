// For server components: the signed-in user, checked against the database (Z4; a check is shared by
// the renders of the next second, ./session-cache.ts);
// anyone without a valid session is sent to sign in.
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { db, type Db } from '../db/client.ts';
import { can, type Permission } from './permissions.ts';
import { type SessionUser } from './session.ts';
import { cachedSessionFromCookie } from './session-cache.ts';

export const CHANGE_PASSWORD_PATH = '/account/password';

export async function requireUser(permission: Permission = 'console.read'): Promise<SessionUser> {
  const user = await requireSignedIn();
  // Z7: until a password someone else chose is replaced, every page leads to the change.
  if (user.mustChangePassword) redirect(CHANGE_PASSWORD_PATH);
  if (!can(user.role, permission)) redirect('/forbidden');
  return user;
}

/** A valid session, whether or not its password must be changed: only the change-password page uses it. */
export async function requireSignedIn(): Promise<SessionUser> {
  const h = await headers();
  const session = await cachedSessionFromCookie(h.get('cookie'), db());
  if (session.problem) redirect(`/sign-in?reason=${session.problem}`);
  return session.user;
}

/** What a page reads with: the signed-in user and the database client the read models take. Pages
 *  never open a client themselves, so every read a page makes starts from a checked session. */
export interface Viewer {
  user: SessionUser;
  db: Db;
}

export async function requireViewer(permission: Permission = 'console.read'): Promise<Viewer> {
  return { user: await requireUser(permission), db: db() };
}

export async function optionalUser(): Promise<SessionUser | null> {
  const h = await headers();
  const session = await cachedSessionFromCookie(h.get('cookie'), db());
  return session.problem || session.user.mustChangePassword ? null : session.user;
}
