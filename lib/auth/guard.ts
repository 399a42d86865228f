// Authorization where the action runs (Z2): every server action goes through consoleAction and
// every route handler through consoleRoute (lib/api/console-route.ts). Both resolve the user and their grants from the database
// (Z4), find the workflow the subject belongs to and check the permission on it against the roles the
// person holds there (Z1), refuse cross-site requests, and audit every refusal (A4).
import { auditRefusal } from '../audit/append.ts';
import type { AuditSubjectOf } from '../audit/actions.ts';
import { db, type Db } from '../db/client.ts';
import { isConnectionLoss } from '../db/connection-loss.ts';
import { componentLogger } from '../ops/log.ts';
import type { Actor, RequestMeta } from '../core/actor.ts';
import { LedgerError } from '../core/errors.ts';
import type { Role } from '../db/generated/enums.ts';
import { ALL_WORKFLOWS_ONLY, canOn, inScope, roleFor, roleSomewhere, scopeOf, type WorkflowScope } from './grants.ts';
import type { Permission } from '../core/permissions.ts';
import { workflowsOfSubject } from './subject-workflows.ts';
import { crossSiteProblem, type RequestInfo } from './request.ts';
import { sessionFromCookie, type SessionUser } from './session.ts';
import { personFromAccessToken, TOKEN_PROBLEMS } from './access-tokens.ts';
import { cachedSessionFromCookie } from './session-cache.ts';

export interface Guarded {
  db: Db;
  user: SessionUser;
  actor: Actor & { kind: 'user' };
  request: RequestMeta;
  /** The workflows the person may see; read models filter by it. */
  scope: WorkflowScope;
}

export interface Subject {
  /** Refusals are recorded under the missing permission, which the audit catalogue lists too. */
  type: AuditSubjectOf<Permission>;
  id: string;
  runId?: string | null;
  /** Every id the action touches, when it is more than one (bulk actions over keys). */
  ids?: readonly string[];
}

/** The subject of a decision on one or more effects. Every key goes in `ids`: the guard checks the
 *  workflows of each, and a label such as "2 keys" names no effect it could find. */
export function effectsSubject(keys: readonly string[]): Subject {
  return { type: 'effect', id: keys.length === 1 ? keys[0]! : `${keys.length} keys`, ids: keys };
}

const ANONYMOUS: Actor = { kind: 'system', id: 'anonymous', label: 'no session' };

/** The actor of an action: the person, with the role through which they may do it (their own role
 *  when the action was refused before a role was found). */
export function userActor(user: SessionUser, role: Role = user.role): Actor & { kind: 'user' } {
  return { kind: 'user', id: user.id, label: user.email, role };
}

/** Throws a LedgerError (unauthenticated / forbidden) after auditing the refusal. */
export async function authorize(
  info: RequestInfo,
  permission: Permission,
  options: { mutating: boolean; subject?: Subject; passwordChange?: boolean; allowUserNavigation?: boolean },
): Promise<Guarded> {
  const database = db();
  const request: RequestMeta = { ip: info.ip, userAgent: info.userAgent, requestId: info.requestId };
  const subject = options.subject ?? { type: 'console', id: permission };
  const refuse = async (
    actor: Actor,
    code: 'unauthenticated' | 'forbidden',
    why: string,
    details: Record<string, string> = {},
  ) => {
    if (options.mutating) {
      await auditRefusal(database, {
        chain: `${subject.type}:${subject.id}`,
        actor,
        action: permission,
        subjectType: subject.type,
        subjectId: subject.id,
        runId: subject.runId ?? null,
        why,
        request,
      });
    }
    return new LedgerError(code, why, details);
  };
  // A read shares the session check of the same second with the pages (Z4, ./session-cache.ts); a
  // change always reads the session afresh. A personal access token is read afresh on every call.
  const token = info.accessToken;
  const session = token
    ? await personFromAccessToken(database, token.bearer)
    : options.mutating
      ? await sessionFromCookie(info.cookie, database)
      : await cachedSessionFromCookie(info.cookie, database);
  if (token) Object.assign(token, { tokenId: (session as { tokenId?: string | null }).tokenId, user: session.user });
  // A bearer token is no ambient credential a browser would attach to another site's request.
  if (options.mutating && !token) {
    const cross = crossSiteProblem(info, options.allowUserNavigation);
    if (cross) throw await refuse(session.user ? userActor(session.user) : ANONYMOUS, 'forbidden', cross);
  }
  if (session.problem) {
    const why = {
      no_session: 'sign in first',
      unknown_user: 'this account no longer exists',
      session_revoked: 'your session was revoked (role or account changed): sign in again',
      signed_out: 'this session was signed out: sign in again',
      ...TOKEN_PROBLEMS,
    }[session.problem];
    throw await refuse(session.user ? userActor(session.user) : ANONYMOUS, 'unauthenticated', why, {
      reason: session.problem,
    });
  }
  const user = session.user;
  // Z7: a password someone else chose opens nothing but the change of that password.
  if (user.mustChangePassword && !options.passwordChange) {
    throw await refuse(userActor(user), 'forbidden', 'choose a new password first (/account/password)', {
      reason: 'password_change',
    });
  }
  const scope = scopeOf(user.grants);
  const about =
    options.subject && !ALL_WORKFLOWS_ONLY.includes(permission)
      ? await workflowsOfSubject(database, subject.type, subject.ids ?? [subject.id])
      : null;
  if (about) {
    if (about.runId && !subject.runId) subject.runId = about.runId;
    const hidden = about.workflows.filter((w) => !inScope(scope, w));
    // A read of something in a workflow the person holds no role in answers as if it did not exist.
    if (hidden.length && !options.mutating) throw new LedgerError('not_found', `no ${subject.type} ${subject.id}`);
    const denied = about.workflows.filter((w) => !canOn(user.grants, permission, w));
    if (denied.length) {
      throw await refuse(
        userActor(user),
        'forbidden',
        // A workflow the person cannot see is not named: the refusal tells them nothing about it.
        hidden.length
          ? `you hold no role on the workflow of this ${subject.type}`
          : `you hold no role that may ${permission} on workflow ${denied.join(', ')}`,
      );
    }
    const role = roleFor(user.grants, permission, about.workflows[0]!)!;
    return { db: database, user, actor: userActor(user, role), request, scope };
  }
  const role = roleSomewhere(user.grants, permission);
  if (!role) {
    const where = ALL_WORKFLOWS_ONLY.includes(permission) ? ' (an all-workflows grant is needed)' : '';
    throw await refuse(userActor(user), 'forbidden', `no role you hold may ${permission}${where}`);
  }
  return { db: database, user, actor: userActor(user, role), request, scope };
}

/** For reads by id outside an action (a route, a page): something in a workflow the viewer holds no
 *  role in is answered like something missing (404). Returns the subject's workflows (none if missing). */
export async function assertVisible(
  viewer: { db: Db; scope: WorkflowScope },
  type: 'run' | 'plan' | 'effect' | 'replay' | 'approval',
  id: string,
): Promise<string[]> {
  const about = await workflowsOfSubject(viewer.db, type, [id]);
  if (about && about.workflows.some((w) => !inScope(viewer.scope, w)))
    throw new LedgerError('not_found', `no ${type} ${id}`);
  return about?.workflows ?? [];
}

export type ActionResult<T> =
  { ok: true; data: T } | { ok: false; code: string; error: string; field?: string; details?: Record<string, unknown> };

export function toActionError(error: unknown): ActionResult<never> {
  if (error instanceof LedgerError) {
    const { field, ...rest } = error.details;
    return {
      ok: false,
      code: error.code,
      error: error.message,
      ...(typeof field === 'string' ? { field } : {}),
      details: JSON.parse(JSON.stringify(rest)),
    };
  }
  if (isConnectionLoss(error)) {
    return {
      ok: false,
      code: 'unavailable',
      error: 'The database cannot be reached right now: nothing was changed. Try again in a moment.',
    };
  }
  componentLogger('console', true).error({ err: error }, 'unexpected error in a console action');
  return {
    ok: false,
    code: 'internal',
    error: 'Something went wrong on the server; nothing may have changed. Check the audit trail and try again.',
  };
}
