// The transition table of RULES.md (S7) as data. Anything not listed is refused with a clear error
// and changes nothing. The database re-checks the state pairs (effect_guard_transition).
import { EffectState } from '../db/generated/enums.ts';
import type { Party } from '../core/actor.ts';

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

export const TRANSITIONS: readonly TransitionRule[] = [
  { from: ['none', 'failed'], to: 'pending', by: ['runtime', 'executor'], needs: [], rule: 'S1/S3 claim' },
  { from: ['pending'], to: 'done', by: ['runtime', 'executor', 'reconciler'], needs: ['receipt'], rule: 'S2' },
  { from: ['pending'], to: 'failed', by: ['runtime', 'executor'], needs: ['evidence'], rule: 'S3' },
  { from: ['pending'], to: 'stuck', by: ['runtime', 'executor'], needs: ['evidence'], rule: 'S6' },
  { from: ['pending'], to: 'unknown', by: ['reconciler', 'runtime'], needs: [], rule: 'S4' },
  { from: ['unknown'], to: 'done', by: ['reconciler'], needs: ['receipt'], rule: 'S4 reconciler found the receipt' },
  {
    from: ['unknown'],
    to: 'done',
    by: ['support'],
    needs: ['receipt_or_evidence', 'reason'],
    rule: 'S4 support: sent',
  },
  { from: ['unknown'], to: 'pending', by: ['support'], needs: ['reason'], rule: 'S4 support: not sent' },
  {
    from: ['pending', 'done', 'failed', 'unknown', 'stuck'],
    to: 'revoked',
    by: ['operator'],
    needs: ['reason'],
    rule: 'S5 human revocation',
  },
  { from: ['none'], to: 'revoked', by: ['operator'], needs: ['reason'], rule: 'S5 a planned target never sent' },
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
    by: ['operator', 'policy'],
    needs: ['reason'],
    rule: 'E2 epoch bump',
  },
];

export type TransitionCheck = { allowed: true; rule: TransitionRule } | { allowed: false; why: string };

/** Whether `party` may move an effect from `from` to `to`. Pure: no database, no clock. */
export function checkTransition(from: EffectState | 'none', to: Move, party: Party): TransitionCheck {
  const byParty = TRANSITIONS.filter((t) => t.to === to && t.by.includes(party));
  if (byParty.length === 0) return { allowed: false, why: `${party} may never move an effect to ${describe(to)}` };
  const rule = byParty.find((t) => t.from.includes(from));
  if (!rule) {
    const sources = [...new Set(byParty.flatMap((t) => t.from))].join(', ');
    return { allowed: false, why: `${describe(to)} is reachable by ${party} only from ${sources}, not from ${from}` };
  }
  return { allowed: true, rule };
}

/** The states `party` may move from to reach `to` (passed to the database, which checks atomically). */
export function allowedSources(to: Move, party: Party): EffectState[] {
  const states = TRANSITIONS.filter((t) => t.to === to && t.by.includes(party)).flatMap((t) => t.from);
  return [...new Set(states.filter((s): s is EffectState => s !== 'none'))];
}

/** What an operator may revoke (S5) and supersede with a new epoch (E2): read from the table. */
export const REVOCABLE_STATES: readonly EffectState[] = allowedSources('revoked', 'operator');
export const BUMPABLE_STATES: readonly EffectState[] = allowedSources('new_epoch', 'operator');

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
