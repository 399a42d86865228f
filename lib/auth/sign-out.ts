// Sign-out ends the session on the server (Z4): the token's session id goes into session_revocation,
// which every request checks, so a copy of the cookie taken before the sign-out is refused after
// it. The revocation and its audit entry are written in one transaction (A1).
import { appendAudit } from '../audit/append.ts';
import type { Db } from '../db/client.ts';
import type { RequestMeta } from '../core/actor.ts';
import { SESSION_ABSOLUTE_MAX, sessionClaims } from './session.ts';
import { forgetCachedSessions } from './session-cache.ts';

/** Revokes the session a decoded token names. A token that names no session (or no user) changes nothing. */
export async function endSession(
  db: Db,
  token: Record<string, unknown> | null | undefined,
  request?: RequestMeta,
): Promise<{ revoked: boolean }> {
  const claims = sessionClaims(token);
  if (!claims) return { revoked: false };
  const done = await db.$transaction(async (tx) => {
    const user = await tx.user.findUnique({ where: { id: claims.uid }, select: { id: true, email: true, role: true } });
    if (!user) return { revoked: false };
    const now = new Date();
    // A row protects nothing once its session is past the absolute maximum, which refuses every copy
    // alone. Not the token's own expiry: next-auth re-encodes a token with a fresh one on every read of
    // /api/auth/session, so a copy kept fresh that way outlives the token that was signed out.
    await tx.sessionRevocation.deleteMany({ where: { expiresAt: { lt: now } } });
    const written = await tx.sessionRevocation.createMany({
      data: [
        { sessionId: claims.sid, userId: user.id, expiresAt: new Date((claims.sat + SESSION_ABSOLUTE_MAX) * 1000) },
      ],
      skipDuplicates: true,
    });
    if (written.count === 0) return { revoked: false };
    await appendAudit(tx, {
      chain: `user:${user.id}`,
      actor: { kind: 'user', id: user.id, label: user.email, role: user.role },
      action: 'auth.sign_out',
      subjectType: 'user',
      subjectId: user.id,
      detail: { sessionId: claims.sid },
      request,
    });
    return { revoked: true };
  });
  forgetCachedSessions(); // Z4: sessions this process remembers may have just ended
  return done;
}
