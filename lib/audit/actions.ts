// The catalogue of audit actions: every action the trail can hold, the kind of subject it is about and
// who may perform it. appendAudit accepts only these names (a typo is a type error), the audit page
// offers them as its action filter. `by` is written here by hand for people reading the trail: who
// may actually perform each action is decided by the permission table (lib/core/permissions.ts) and
// the transition table, which the commands ask.
import type { Party } from '@/lib/core/actor.ts';

export type AuditSubjectType =
  | 'effect'
  | 'attempt'
  | 'run'
  | 'workflow'
  | 'plan'
  | 'replay'
  | 'approval'
  | 'user'
  | 'tool'
  | 'runtime_key'
  | 'access_token'
  | 'notification_route'
  | 'audit'
  | 'api'
  | 'console'
  | 'retention';

export interface AuditActionSpec {
  /** The subject types an entry of this action may name. */
  subject: readonly AuditSubjectType[];
  /** Who may perform it (refusals of anyone else are recorded under the same action, A4). */
  by: readonly Party[];
  /** What it records, for people reading the trail. */
  what: string;
}

const EFFECT_WRITERS = ['runtime', 'executor'] as const satisfies readonly Party[];
const ADMIN = ['admin', 'system'] as const satisfies readonly Party[];

export const AUDIT_ACTIONS = {
  // Effects (S, E, V)
  'effect.claim': {
    subject: ['effect', 'run', 'api'],
    by: EFFECT_WRITERS,
    what: 'claimed a key before the provider call',
  },
  'effect.complete': {
    subject: ['effect'],
    by: [...EFFECT_WRITERS, 'reconciler'],
    what: 'done with a provider receipt',
  },
  'effect.fail': { subject: ['effect'], by: EFFECT_WRITERS, what: 'failed: a definitive rejection, the key is free' },
  'effect.mark_unknown': {
    subject: ['effect'],
    by: ['runtime', 'reconciler'],
    what: 'unknown: the outcome is ambiguous, support decides',
  },
  'effect.report': {
    subject: ['effect', 'api'],
    by: [...EFFECT_WRITERS, 'reconciler'],
    what: "a runtime reported an effect's outcome",
  },
  'effect.mark_stuck': { subject: ['effect'], by: EFFECT_WRITERS, what: 'stuck: issued but never completable' },
  'effect.resolve_sent': { subject: ['effect'], by: ['support'], what: 'support resolved an unknown as sent' },
  'effect.resolve_not_sent': { subject: ['effect'], by: ['support'], what: 'support resolved an unknown as not sent' },
  'effect.revoke': { subject: ['effect', 'console'], by: ['operator'], what: 'revoked by a person, with a reason' },
  'effect.revoke_deletion': {
    subject: ['effect', 'api'],
    by: ['runtime'],
    what: 'revoked by a deletion through the API',
  },
  'effect.bump': { subject: ['effect'], by: ['operator', 'policy'], what: 'a new epoch superseded the current one' },
  'attempt.record_response': {
    subject: ['attempt', 'run', 'api'],
    by: EFFECT_WRITERS,
    what: 'stored a raw provider response',
  },
  // Runs and plans (P)
  'run.create': { subject: ['run', 'workflow', 'api'], by: ['runtime', 'system'], what: 'an agent run started' },
  'run.read': { subject: ['run', 'api'], by: ['runtime'], what: 'a runtime read a run' },
  'effect.read': { subject: ['effect', 'api'], by: ['runtime'], what: 'a runtime read an effect' },
  'run.replay_request': { subject: ['run', 'api'], by: ['runtime'], what: 'a runtime asked to replay a run' },
  'run.crashed': { subject: ['run'], by: ['system'], what: 'a run stopped half-way' },
  'plan.submit': {
    subject: ['plan', 'run', 'api'],
    by: ['runtime', 'operator', 'system'],
    what: 'a plan was submitted',
  },
  'plan.approve': { subject: ['plan', 'console'], by: ['operator'], what: 'a plan was approved and frozen' },
  'plan.reject': { subject: ['plan'], by: ['operator'], what: 'a submitted plan was rejected' },
  // Forced replays (F) and four-eyes approvals (Z3)
  'replay.request': { subject: ['replay', 'run', 'console'], by: ['operator'], what: 'a forced replay was requested' },
  'replay.approve': {
    subject: ['replay', 'approval', 'console'],
    by: ['operator'],
    what: 'a second operator approved a replay',
  },
  'replay.reject': { subject: ['replay'], by: ['operator'], what: 'a second operator rejected a replay' },
  'replay.start': { subject: ['replay'], by: ['operator'], what: 'a replay started' },
  'replay.pause': { subject: ['replay'], by: ['operator'], what: 'a replay was paused' },
  'replay.resume': { subject: ['replay'], by: ['operator'], what: 'a replay was resumed' },
  'replay.cancel': { subject: ['replay'], by: ['operator'], what: 'a replay was cancelled' },
  'replay.complete': { subject: ['replay'], by: ['executor'], what: 'a replay finished' },
  'approval.request': { subject: ['approval'], by: ['operator'], what: 'an epoch bump awaits a second operator' },
  'approval.approve': { subject: ['approval'], by: ['operator'], what: 'a second operator approved the bumps' },
  'approval.reject': { subject: ['approval'], by: ['operator'], what: 'a second operator rejected the bumps' },
  // People, tools, keys (Z)
  'auth.sign_in': { subject: ['user'], by: ['admin', 'operator', 'support', 'auditor'], what: 'a sign-in' },
  'auth.sign_out': {
    subject: ['user'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a sign-out: the session is refused from then on',
  },
  'user.password_change': {
    subject: ['user', 'console'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a person chose a new password',
  },
  'auth.sso_sign_in': {
    subject: ['user'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a single sign-on; refused for an unknown or disabled person or an unverified email',
  },
  'notification.preferences': {
    subject: ['user', 'console'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a person changed which notifications they get, and how',
  },
  'user.create': { subject: ['user'], by: ADMIN, what: 'a user was added' },
  'user.sso_create': {
    subject: ['user'],
    by: ['system'],
    what: 'a person was added at their first single sign-on, from a mapped group',
  },
  'user.sso_role': {
    subject: ['user'],
    by: ['system'],
    what: "a single sign-on re-applied the role the person's groups map to",
  },
  'user.sso_password_void': {
    subject: ['user'],
    by: ['system'],
    what: 'a single sign-on voided a one-time password the person had not changed yet',
  },
  'user.role': { subject: ['user'], by: ['admin'], what: "a user's role changed" },
  'user.disable': { subject: ['user'], by: ['admin'], what: 'a user was disabled' },
  'user.enable': { subject: ['user'], by: ['admin'], what: 'a user was enabled again' },
  'user.grant': { subject: ['user'], by: ['admin'], what: 'a role on one workflow, or on all, was granted' },
  'user.ungrant': { subject: ['user'], by: ['admin'], what: 'a role on one workflow, or on all, was taken away' },
  'tool.register': { subject: ['tool'], by: ['system'], what: 'a tool was registered' },
  'tool.create': { subject: ['tool'], by: ['admin'], what: 'a tool was registered' },
  'tool.update': { subject: ['tool'], by: ['admin'], what: "a tool's definition changed" },
  'runtime_key.create': { subject: ['runtime_key'], by: ['admin'], what: 'a runtime key was created' },
  'runtime_key.revoke': { subject: ['runtime_key'], by: ['admin'], what: 'a runtime key was revoked' },
  'access_token.create': {
    subject: ['access_token'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a person created a personal access token for the management API',
  },
  'access_token.revoke': {
    subject: ['access_token'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a personal access token was revoked',
  },
  'access_token.use': {
    subject: ['access_token', 'api'],
    by: ['admin', 'operator', 'support', 'auditor'],
    what: 'a call to the management API with a personal access token, or its refusal at the door',
  },
  'notification_route.create': {
    subject: ['notification_route'],
    by: ['admin'],
    what: 'a chat webhook route was stored (effect-ledger apply)',
  },
  'notification_route.update': {
    subject: ['notification_route'],
    by: ['admin'],
    what: "a stored chat webhook route's fields changed",
  },
  'notification_route.remove': {
    subject: ['notification_route'],
    by: ['admin'],
    what: 'a stored chat webhook route was removed',
  },
  'config.apply': {
    subject: ['tool', 'runtime_key', 'user', 'notification_route', 'console'],
    by: ['admin'],
    what: "one change of a declarative setup file (effect-ledger apply), with the file's SHA-256",
  },
  'audit.read': { subject: ['audit'], by: ['admin', 'operator', 'support', 'auditor'], what: 'the trail was read' },
  'audit.export': { subject: ['audit', 'console'], by: ['admin', 'auditor'], what: 'the trail was exported' },
  // Retention (T1): one entry per prune transaction, with its counts
  'retention.prune': {
    subject: ['retention'],
    by: ['policy', 'system'],
    what: "pruned retired runs' idempotency records, raw responses and finished replay items, or old notifications",
  },
  'audit.checkpoint': { subject: ['audit'], by: ['system'], what: 'the heads of the chains were signed' },
  'audit.tree_head': {
    subject: ['audit'],
    by: ['system'],
    what: 'the head of the audit tree was signed, or signing it was refused',
  },
  // The audit tree's read API (docs/AUDIT.md); refusals at its door are recorded under this action.
  'audit.tree_read': { subject: ['audit', 'api'], by: ['runtime'], what: 'a runtime read a tree head or a proof' },
  'audit.tree_cosign': {
    subject: ['audit', 'api'],
    by: ['runtime'],
    what: 'a witness submitted its cosignature of a signed tree head, or it was refused',
  },
  // Refusals at the console's door are recorded under the permission that was missing (Z2, A4).
  'console.read': { subject: ['console'], by: ['admin', 'operator', 'support', 'auditor'], what: 'console access' },
  'effect.bump.request': { subject: ['effect', 'console'], by: ['operator'], what: 'asked for an epoch bump' },
  'effect.bump.approve': { subject: ['approval', 'console'], by: ['operator'], what: 'decided on an epoch bump' },
  'effect.resolve': { subject: ['effect', 'console'], by: ['support'], what: 'resolved an unknown' },
  'users.manage': { subject: ['user', 'console'], by: ['admin'], what: 'user administration' },
  'runtime_keys.manage': { subject: ['runtime_key', 'console'], by: ['admin'], what: 'runtime key administration' },
  'tools.manage': { subject: ['tool', 'console'], by: ['admin'], what: 'tool administration' },
  'replay.control': { subject: ['replay', 'console'], by: ['operator'], what: 'replay start, pause, resume, cancel' },
} as const satisfies Record<string, AuditActionSpec>;

export type AuditAction = keyof typeof AUDIT_ACTIONS;
export type AuditSubjectOf<A extends AuditAction> = (typeof AUDIT_ACTIONS)[A]['subject'][number];

/** The actions a request to the agent API may be refused under at its door (401, A4). */
export type ApiDoorAction = { [A in AuditAction]: 'api' extends AuditSubjectOf<A> ? A : never }[AuditAction];

export function isAuditAction(name: string): name is AuditAction {
  return Object.hasOwn(AUDIT_ACTIONS, name);
}
