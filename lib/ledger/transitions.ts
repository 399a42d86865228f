// The transition table of RULES.md (S7) as data; its human parties come from the permission table
// (lib/core/permissions.ts). Anything not listed is refused with a clear error
// and changes nothing. The database re-checks the state pairs (effect_guard_transition).
import { EffectState } from '../db/generated/enums.ts';
import type { Party } from '../core/actor.ts';
import { PERMISSIONS, rolesWith, type PermissionTable } from '../core/permissions.ts';

export { EffectState };

/** Every state a key can be in at one epoch, in the order pages list them. */
export const EFFECT_STATES = Object.values(EffectState) as readonly EffectState[];

/** What a transition moves to: a state, or a new epoch (E1-E3). */
export type Move = EffectState | 'new_epoch';

/** What the mover must bring. */
export type Requirement = 'receipt' | 'evidence' | 'receipt_or_evidence' | 'reason';

export interface TransitionRule {
  from: readonly (EffectState | 'none')[];
  to: Move;
  by: readonly Party[];
  needs: readonly Requirement[];
  /** The RULES.md row it implements. */
  rule: string;
}

/** The table, with its human parties read from the permission table (Z1): support's resolutions are
 *  made by whoever may effect.resolve, revocations by whoever may effect.revoke, and a new epoch by
 *  whoever may ask for or approve one (the approver executes the bumps). Machine parties are fixed
 *  here. Built from a table so a test can show the two cannot disagree. */
export function transitionTable(permissions: PermissionTable = PERMISSIONS): readonly TransitionRule[] {
  const resolvers = rolesWith('effect.resolve', permissions);
  const revokers = rolesWith('effect.revoke', permissions);
  const bumpers = [
    ...new Set([...rolesWith('effect.bump.request', permissions), ...rolesWith('effect.bump.approve', permissions)]),
  ];
  return [
    { from: ['none', 'failed'], to: 'pending', by: ['runtime', 'executor'], needs: [], rule: 'S1/S3 claim' },
    { from: ['pending'], to: 'done', by: ['runtime', 'executor', 'reconciler'], needs: ['receipt'], rule: 'S2' },
    { from: ['pending'], to: 'failed', by: ['runtime', 'executor'], needs: ['evidence'], rule: 'S3' },
    { from: ['pending'], to: 'stuck', by: ['runtime', 'executor'], needs: ['evidence'], rule: 'S6' },
    { from: ['pending'], to: 'unknown', by: ['reconciler', 'runtime'], needs: [], rule: 'S4' },
    { from: ['unknown'], to: 'done', by: ['reconciler'], needs: ['receipt'], rule: 'S4 reconciler found the receipt' },
    {
      from: ['unknown'],
      to: 'done',
      by: resolvers,
      needs: ['receipt_or_evidence', 'reason'],
      rule: 'S4 support: sent',
    },
    { from: ['unknown'], to: 'pending', by: resolvers, needs: ['reason'], rule: 'S4 support: not sent' },
    {
      from: ['pending', 'done', 'failed', 'unknown', 'stuck'],
      to: 'revoked',
      by: revokers,
      needs: ['reason'],
      rule: 'S5 human revocation',
    },
    { from: ['none'], to: 'revoked', by: revokers, needs: ['reason'], rule: 'S5 a planned target never sent' },
    {
      from: ['pending', 'done', 'unknown', 'stuck'],
      to: 'revoked',
      by: ['runtime'],
      needs: [],
      rule: 'S5/V1 deletion through our API',
    },
    {
      from: ['done', 'revoked', 'stuck'],
      to: 'new_epoch',
      by: [...bumpers, 'policy'],
      needs: ['reason'],
      rule: 'E2 epoch bump',
    },
  ];
}

export const TRANSITIONS: readonly TransitionRule[] = transitionTable();

export type TransitionCheck = { allowed: true; rule: TransitionRule } | { allowed: false; why: string };

/** Whether `party` may move an effect from `from` to `to`. Pure: no database, no clock. */
export function checkTransition(
  from: EffectState | 'none',
  to: Move,
  party: Party,
  table: readonly TransitionRule[] = TRANSITIONS,
): TransitionCheck {
  const byParty = table.filter((t) => t.to === to && t.by.includes(party));
  if (byParty.length === 0) return { allowed: false, why: `${party} may never move an effect to ${describe(to)}` };
  const rule = byParty.find((t) => t.from.includes(from));
  if (!rule) {
    const sources = [...new Set(byParty.flatMap((t) => t.from))].join(', ');
    return { allowed: false, why: `${describe(to)} is reachable by ${party} only from ${sources}, not from ${from}` };
  }
  return { allowed: true, rule };
}

/** The states `party` may move from to reach `to` (passed to the database, which checks atomically). */
export function allowedSources(to: Move, party: Party, table: readonly TransitionRule[] = TRANSITIONS): EffectState[] {
  const states = table.filter((t) => t.to === to && t.by.includes(party)).flatMap((t) => t.from);
  return [...new Set(states.filter((s): s is EffectState => s !== 'none'))];
}

/** What a person may revoke (S5) and supersede with a new epoch (E2): read from the table, for the
 *  roles the permission table lets do either. */
export const REVOCABLE_STATES: readonly EffectState[] = sourcesForRoles('revoked', rolesWith('effect.revoke'));
export const BUMPABLE_STATES: readonly EffectState[] = sourcesForRoles('new_epoch', rolesWith('effect.bump.request'));

function sourcesForRoles(to: Move, roles: readonly Party[]): EffectState[] {
  return [...new Set(roles.flatMap((role) => allowedSources(to, role)))];
}

export function requirementsFor(to: Move, party: Party, from: EffectState | 'none'): readonly Requirement[] {
  const check = checkTransition(from, to, party);
  return check.allowed ? check.rule.needs : [];
}

function describe(to: Move): string {
  return to === 'new_epoch' ? 'a new epoch' : to;
}

/** Human label for each state, exhaustive so a new state cannot be forgotten. */
export function stateLabel(state: EffectState): string {
  switch (state) {
    case 'pending':
      return 'Pending';
    case 'done':
      return 'Done';
    case 'failed':
      return 'Failed';
    case 'unknown':
      return 'Unknown';
    case 'revoked':
      return 'Revoked';
    case 'stuck':
      return 'Stuck';
    default:
      return state satisfies never;
  }
}
