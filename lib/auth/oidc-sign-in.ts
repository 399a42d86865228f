// Who a single sign-on lets in (Z1, Z4). The identity provider vouches for an email; this console
// decides the person and their role:
// - the email must be verified by the provider (email_verified true), else the sign-in is refused;
// - an existing person with that email keeps their account; a disabled one is refused;
// - with OIDC_SYNC_ROLES on, a person whose groups map to a role gets that role at each sign-in (a role
//   change bumps the session version, ending their other sessions as any role change does), except
//   that the last all-workflows admin keeps admin (the skipped change is audited as refused);
// - a person with no account is created just in time when their groups map to a role, else refused;
// - a one-time password still waiting to be changed (Z7) is voided: the provider has just proved who
//   the person is, so the change-password page is not demanded, and the handed-over password, which
//   others saw, stops opening the account (the bumped session version ends any session it opened).
// Every outcome is audited in the transaction that decides it.
import { appendAudit, auditRefusal } from '../audit/append.ts';
import type { Db, DbOrTx } from '../db/client.ts';
import { env } from '../env.ts';
import type { Actor, RequestMeta, Role } from '../core/actor.ts';
import { isLastAllWorkflowsAdmin } from './grant-commands.ts';
import { groupsOf, roleFromGroups } from './oidc-roles.ts';
import { forgetCachedSessions } from './session-cache.ts';
import type { OidcRefusal } from './sign-in-errors.ts';
import type { OidcSettings } from './sign-in-methods.ts';

export type { OidcRefusal } from './sign-in-errors.ts';
export { OIDC_REFUSAL_MESSAGES } from './sign-in-errors.ts';

export type OidcAdmission =
  | { ok: true; user: { id: string; email: string; name: string; role: Role; sessionVersion: number } }
  | { ok: false; refusal: OidcRefusal };

type Settings = Pick<OidcSettings, 'issuer' | 'groupsClaim' | 'roleMap' | 'syncRoles'>;

function identityProvider(settings: Settings): Actor {
  return { kind: 'system', id: 'oidc', label: settings.issuer };
}

function isVerified(value: unknown): boolean {
  return value === true || value === 'true';
}

/** Voids a one-time password only while it is still pending: a password the person chose meanwhile is
 *  theirs and stays. True when it voided one (the session version moved). */
async function voidOneTimePassword(
  tx: DbOrTx,
  userId: string,
  actor: Actor,
  detail: Record<string, unknown>,
  request?: RequestMeta,
) {
  const voided = await tx.user.updateMany({
    where: { id: userId, mustChangePassword: true },
    data: { passwordHash: null, mustChangePassword: false, sessionVersion: { increment: 1 } },
  });
  if (voided.count === 0) return false;
  await appendAudit(tx, {
    chain: `user:${userId}`,
    actor,
    action: 'user.sso_password_void',
    subjectType: 'user',
    subjectId: userId,
    detail,
    request,
  });
  return true;
}

export async function admitOidcSignIn(
  db: Db,
  claims: Record<string, unknown>,
  settings: Settings,
  request?: RequestMeta,
): Promise<OidcAdmission> {
  const email = String(claims.email ?? '')
    .trim()
    .toLowerCase();
  const groups = groupsOf(claims[settings.groupsClaim]);
  const mapped = roleFromGroups(groups, settings.roleMap);
  const seen = { sub: String(claims.sub ?? ''), issuer: settings.issuer, groups, mappedRole: mapped };
  const refuse = async (tx: DbOrTx, refusal: OidcRefusal, subjectId: string) => {
    await auditRefusal(tx, {
      chain: `auth:${email || seen.sub}`,
      actor: identityProvider(settings),
      action: 'auth.sso_sign_in',
      subjectType: 'user',
      subjectId,
      detail: { ...seen, email },
      request,
      why: refusal,
    });
    return { ok: false as const, refusal };
  };
  if (!email || !isVerified(claims.email_verified)) return refuse(db, 'sso_unverified', email || seen.sub);

  let sessionsEnded = false;
  const admit = () =>
    db.$transaction(
      async (tx): Promise<OidcAdmission> => {
        let user = await tx.user.findUnique({ where: { email } });
        if (user?.disabled) return refuse(tx, 'sso_disabled', user.id);
        if (!user) {
          if (!mapped) return refuse(tx, 'sso_unknown', email);
          const name = String(claims.name ?? '').trim() || email;
          user = await tx.user.create({ data: { email, name: name.slice(0, 200), role: mapped } });
          await appendAudit(tx, {
            chain: `user:${user.id}`,
            actor: identityProvider(settings),
            action: 'user.sso_create',
            subjectType: 'user',
            subjectId: user.id,
            after: mapped,
            detail: { ...seen, email },
            request,
          });
        } else if (user.mustChangePassword) {
          if (await voidOneTimePassword(tx, user.id, identityProvider(settings), seen, request)) sessionsEnded = true;
          user = await tx.user.findUniqueOrThrow({ where: { id: user.id } });
        }
        if (
          settings.syncRoles &&
          mapped &&
          mapped !== user.role &&
          user.role === 'admin' &&
          (await isLastAllWorkflowsAdmin(tx, user.id))
        ) {
          // The change would leave nobody able to manage users (Z1). The person is who the provider
          // says, so they still sign in, as admin; the skipped change waits on the trail for an admin.
          await auditRefusal(tx, {
            chain: `user:${user.id}`,
            actor: identityProvider(settings),
            action: 'user.sso_role',
            subjectType: 'user',
            subjectId: user.id,
            before: user.role,
            after: mapped,
            detail: seen,
            request,
            why: 'kept admin: this is the last all-workflows admin; grant admin on all workflows to someone else first',
          });
        } else if (settings.syncRoles && mapped && mapped !== user.role) {
          const before = user.role;
          user = await tx.user.update({
            where: { id: user.id },
            data: { role: mapped, sessionVersion: { increment: 1 } },
          });
          sessionsEnded = true;
          await appendAudit(tx, {
            chain: `user:${user.id}`,
            actor: identityProvider(settings),
            action: 'user.sso_role',
            subjectType: 'user',
            subjectId: user.id,
            before,
            after: mapped,
            detail: seen,
            request,
          });
        }
        await appendAudit(tx, {
          chain: `user:${user.id}`,
          actor: { kind: 'user', id: user.id, label: user.email, role: user.role },
          action: 'auth.sso_sign_in',
          subjectType: 'user',
          subjectId: user.id,
          detail: seen,
          request,
        });
        const { id, name, role, sessionVersion } = user;
        return { ok: true, user: { id, email, name, role, sessionVersion } };
        // A person waiting at the sign-in page is better served by a wait for a connection than by
        // Prisma's 2 s default failing the sign-in on a busy pool.
      },
      { maxWait: env().DATABASE_POOL_TIMEOUT_MS, timeout: 30_000 },
    );
  const admitted = await admit().catch((error: unknown) => {
    // Two first sign-ins of one new person at once: the loser's insert hits the unique email and it
    // runs again, now as the existing person the winner created.
    if ((error as { code?: string }).code === 'P2002') return admit();
    throw error;
  });
  if (sessionsEnded) forgetCachedSessions(); // Z4: sessions this process remembers may have just ended
  return admitted;
}
