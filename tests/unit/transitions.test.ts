// S7: the transition table. The expected list below is written from RULES.md by hand, independently
// of lib/ledger/transitions.ts, and compared with checkTransition over every state x move x party.
import { describe, expect, it } from 'vitest';
import {
  allowedSources,
  checkTransition,
  requirementsFor,
  stateLabel,
  type EffectState,
  type Move,
  type Party,
} from '@/lib/ledger/index.ts';

const FROM: (EffectState | 'none')[] = ['none', 'pending', 'done', 'failed', 'unknown', 'revoked', 'stuck'];
const MOVES: Move[] = ['pending', 'done', 'failed', 'unknown', 'revoked', 'stuck', 'new_epoch'];
const PARTIES: Party[] = [
  'admin',
  'operator',
  'support',
  'auditor',
  'runtime',
  'executor',
  'reconciler',
  'policy',
  'system',
];

// RULES.md, "States of a key at one epoch", row by row: from -> to : who may [: what they must bring].
const RULES_TABLE = `
none -> pending : runtime executor
failed -> pending : runtime executor
pending -> done : runtime executor reconciler : receipt
pending -> failed : runtime executor : evidence
pending -> stuck : runtime executor : evidence
pending -> unknown : reconciler runtime
unknown -> done : reconciler : receipt
unknown -> done : support : receipt_or_evidence reason
unknown -> pending : support : reason
pending -> revoked : operator : reason
done -> revoked : operator : reason
failed -> revoked : operator : reason
none -> revoked : operator : reason
unknown -> revoked : operator : reason
stuck -> revoked : operator : reason
pending -> revoked : runtime
done -> revoked : runtime
unknown -> revoked : runtime
stuck -> revoked : runtime
done -> new_epoch : operator policy : reason
revoked -> new_epoch : operator policy : reason
stuck -> new_epoch : operator policy : reason
`;

const expected = new Map<string, string[]>();
for (const line of RULES_TABLE.trim().split('\n')) {
  const [pair, who, needs = ''] = line.split(' : ');
  const [from, to] = pair!.split(' -> ');
  for (const party of who!.split(' '))
    expected.set(`${from} -> ${to} by ${party}`, needs.split(' ').filter(Boolean).sort());
}

describe('S7: the transition table', () => {
  it('S7: exhaustive: every state x move x party is allowed exactly when RULES.md lists it (441 cases)', () => {
    const mismatches: string[] = [];
    let allowedCount = 0;
    for (const from of FROM) {
      for (const to of MOVES) {
        for (const party of PARTIES) {
          const id = `${from} -> ${to} by ${party}`;
          const check = checkTransition(from, to, party);
          const want = expected.get(id);
          if (check.allowed) allowedCount++;
          if (check.allowed !== (want !== undefined))
            mismatches.push(`${id}: got ${check.allowed ? 'allowed' : 'refused'}`);
          if (check.allowed && want && JSON.stringify([...check.rule.needs].sort()) !== JSON.stringify(want)) {
            mismatches.push(`${id}: needs ${check.rule.needs.join(',')} instead of ${want.join(',')}`);
          }
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(FROM.length * MOVES.length * PARTIES.length).toBe(441);
    expect(allowedCount).toBe(expected.size);
  });

  it('S7: every pair not in the table is refused for every party, with a reason that names the move', () => {
    const pairsInTable = new Set([...expected.keys()].map((k) => k.split(' by ')[0]));
    let refused = 0;
    for (const from of FROM) {
      for (const to of MOVES) {
        if (pairsInTable.has(`${from} -> ${to}`)) continue;
        for (const party of PARTIES) {
          const check = checkTransition(from, to, party);
          expect(check.allowed, `${from} -> ${to} by ${party}`).toBe(false);
          if (!check.allowed) {
            expect(check.why).toMatch(to === 'new_epoch' ? /new epoch/ : new RegExp(to));
            refused++;
          }
        }
      }
    }
    // 49 pairs minus the 18 the table lists, for each of 9 parties.
    expect(refused).toBe((FROM.length * MOVES.length - pairsInTable.size) * PARTIES.length);
  });

  it('S7: auditors and admins never move an effect; absence (reconciler) never revokes', () => {
    for (const from of FROM) {
      for (const to of MOVES) {
        expect(checkTransition(from, to, 'auditor').allowed).toBe(false);
        expect(checkTransition(from, to, 'admin').allowed).toBe(false);
        expect(checkTransition(from, to, 'system').allowed).toBe(false);
      }
      expect(checkTransition(from, 'revoked', 'reconciler').allowed).toBe(false);
      expect(checkTransition(from, 'revoked', 'support').allowed).toBe(false);
    }
  });

  it('S7: allowedSources (what the database re-checks) agrees with the table for every move and party', () => {
    for (const to of MOVES) {
      for (const party of PARTIES) {
        const want = FROM.filter((from) => from !== 'none' && expected.has(`${from} -> ${to} by ${party}`)).sort();
        expect([...allowedSources(to, party)].sort(), `${to} by ${party}`).toEqual(want);
      }
    }
  });

  it('S7: requirementsFor gives the needs of the matching row and nothing for a refused move', () => {
    expect([...requirementsFor('done', 'support', 'unknown')].sort()).toEqual(['reason', 'receipt_or_evidence']);
    expect(requirementsFor('done', 'runtime', 'pending')).toEqual(['receipt']);
    expect(requirementsFor('revoked', 'operator', 'done')).toEqual(['reason']);
    expect(requirementsFor('revoked', 'support', 'done')).toEqual([]);
    expect(requirementsFor('new_epoch', 'operator', 'pending')).toEqual([]);
  });

  it('S7: every state has a label (exhaustive switch)', () => {
    for (const state of FROM.filter((s): s is EffectState => s !== 'none')) expect(stateLabel(state)).toMatch(/^[A-Z]/);
  });
});
