// Resolves the signed-in user on EVERY request from the database, not from the token alone: the
// token carries only the user id, the session version it was issued at and the id of its sign-in
// (sid). A disabled user, or one whose role changed (both bump session_version), is refused on the
// next request, and so is a signed-out session, whose sid is in session_revocation (Z4).
import { randomUUID } from 'node:crypto';
import { decode, encode } from 'next-auth/jwt';
import type { Role } from '../db/generated/enums.ts';
import { db as defaultDb, type DbOrTx } from '../db/client.ts';
import type { Grant } from './grants.ts';
import { authSecret } from './secret.ts';
import { isUuid } from '../uuid.ts';

export const SESSION_COOKIES = ['__Secure-next-auth.session-token', 'next-auth.session-token'];
export const SESSION_MAX_AGE = 12 * 60 * 60;
/** No session outlives this from its sign-in, however often next-auth re-encodes its token with a
 *  fresh expiry (it does on every read of /api/auth/session). It also bounds how long a sign-out must
 *  be remembered: a copy of the cookie kept fresh that way dies with it (Z4). */
export const SESSION_ABSOLUTE_MAX = 7 * 24 * 60 * 60;

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  /** The role the person was created with; what they may do is in `grants` (Z1). */
  role: Role;
  /** Read with the user on every request, so a grant added or removed counts at the next one. */
  grants: Grant[];
  /** Z7: a password someone else chose; nothing but changing it is allowed until then. */
  mustChangePassword: boolean;
}

export type SessionProblem = 'no_session' | 'unknown_user' | 'disabled' | 'session_revoked' | 'signed_out';

/** What a session token says about itself. `sid` names the sign-in, and stays the same when next-auth
 *  re-encodes the token (its own `jti` changes on every encode, so it cannot name a session). */
export interface SessionClaims {
  uid: string;
  sv: number;
  sid: string;
  exp: number;
  /** When the person signed in (seconds), kept through every re-encode like `sid`. */
  sat: number;
}

export function newSessionId(): string {
  return randomUUID();
}

export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(i + 1).trim());
    } catch {
      return null; // not percent-encoding: no token of ours, so no session
    }
  }
  return null;
}

/** The claims of a decoded token, or null when any is missing or the sign-in is older than
 *  SESSION_ABSOLUTE_MAX. A token without a session id or a sign-in time cannot be signed out for good
 *  (its revocation could not be kept as long as a refreshed copy lives), so it is not accepted either. */
export function sessionClaims(token: Record<string, unknown> | null | undefined): SessionClaims | null {
  if (!token) return null;
  const { uid, sv, sid, exp, sat } = token;
  if (typeof uid !== 'string' || typeof sv !== 'number' || typeof sid !== 'string' || !isUuid(sid)) return null;
  const now = Math.floor(Date.now() / 1000);
  if (typeof sat !== 'number' || !Number.isFinite(sat) || sat + SESSION_ABSOLUTE_MAX <= now) return null;
  return { uid, sv, sid, sat, exp: typeof exp === 'number' ? exp : now + SESSION_MAX_AGE };
}

/** The claims a new sign-in's token starts with: its session id and sign-in time. */
export function newSessionClaims(): { sid: string; sat: number } {
  return { sid: newSessionId(), sat: Math.floor(Date.now() / 1000) };
}

export async function tokenFromCookie(header: string | null): Promise<SessionClaims | null> {
  for (const name of SESSION_COOKIES) {
    const raw = readCookie(header, name);
    if (!raw) continue;
    try {
      return sessionClaims(await decode({ token: raw, secret: authSecret() }));
    } catch {
      return null;
    }
  }
  return null;
}

export async function sessionFromCookie(
  header: string | null,
  database: DbOrTx = defaultDb(),
): Promise<{ user: SessionUser; problem: null } | { user: SessionUser | null; problem: SessionProblem }> {
  const token = await tokenFromCookie(header);
  if (!token) return { user: null, problem: 'no_session' };
  const row = await database.user.findUnique({
    where: { id: token.uid },
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      disabled: true,
      sessionVersion: true,
      mustChangePassword: true,
      grants: { select: { role: true, workflow: true }, orderBy: [{ workflow: 'asc' }, { role: 'asc' }] },
      revokedSessions: { where: { sessionId: token.sid }, select: { sessionId: true } },
    },
  });
  if (!row) return { user: null, problem: 'unknown_user' };
  const user = {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    grants: row.grants,
    mustChangePassword: row.mustChangePassword,
  };
  if (row.disabled) return { user, problem: 'disabled' };
  if (row.sessionVersion !== token.sv) return { user, problem: 'session_revoked' };
  if (row.revokedSessions.length > 0) return { user, problem: 'signed_out' };
  return { user, problem: null };
}

/** A session cookie value for a user (tests and the Playwright sign-in fixture). */
export async function mintSessionToken(user: { id: string; email: string; sessionVersion: number }): Promise<string> {
  return encode({
    token: { sub: user.id, uid: user.id, sv: user.sessionVersion, ...newSessionClaims(), email: user.email },
    secret: authSecret(),
    maxAge: SESSION_MAX_AGE,
  });
}
