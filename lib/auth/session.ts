// Resolves the signed-in user on EVERY request from the database, not from the token alone: the
// token carries only the user id and the session version it was issued at. A disabled user, or one
// whose role changed (both bump session_version), is refused on the next request (Z4).
import { decode, encode } from 'next-auth/jwt';
import type { Role } from '../db/generated/enums.ts';
import { db as defaultDb, type DbOrTx } from '../db/client.ts';
import { authSecret } from './secret.ts';

export const SESSION_COOKIES = ['__Secure-next-auth.session-token', 'next-auth.session-token'];
export const SESSION_MAX_AGE = 12 * 60 * 60;

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: Role;
}

export type SessionProblem = 'no_session' | 'unknown_user' | 'disabled' | 'session_revoked';

function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i < 0) continue;
    if (part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return null;
}

export async function tokenFromCookie(header: string | null): Promise<{ uid: string; sv: number } | null> {
  for (const name of SESSION_COOKIES) {
    const raw = readCookie(header, name);
    if (!raw) continue;
    try {
      const token = await decode({ token: raw, secret: authSecret() });
      if (token && typeof token.uid === 'string' && typeof token.sv === 'number')
        return { uid: token.uid, sv: token.sv };
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
    select: { id: true, email: true, name: true, role: true, disabled: true, sessionVersion: true },
  });
  if (!row) return { user: null, problem: 'unknown_user' };
  const user = { id: row.id, email: row.email, name: row.name, role: row.role };
  if (row.disabled) return { user, problem: 'disabled' };
  if (row.sessionVersion !== token.sv) return { user, problem: 'session_revoked' };
  return { user, problem: null };
}

/** A session cookie value for a user (tests and the Playwright sign-in fixture). */
export async function mintSessionToken(user: { id: string; email: string; sessionVersion: number }): Promise<string> {
  return encode({
    token: { sub: user.id, uid: user.id, sv: user.sessionVersion, email: user.email },
    secret: authSecret(),
    maxAge: SESSION_MAX_AGE,
  });
}
