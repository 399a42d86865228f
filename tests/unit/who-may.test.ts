// Z1 and S7: one home for "who may". The commands ask `may` (lib/core/permissions.ts) and the
// transition table reads its human parties from the permission table, so granting a permission to
// another role changes both at once. Shown on a copy of the table with one grant moved, and held by a
// scan that fails if a command checks a role inline again.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MACHINE_PERMISSIONS,
  PERMISSIONS,
  ROLES,
  may,
  rolesWith,
  whoMay,
  type Permission,
  type PermissionTable,
} from '@/lib/core/permissions.ts';
import type { Actor } from '@/lib/core/actor.ts';
import { checkTransition, transitionTable, TRANSITIONS } from '@/lib/ledger/transitions.ts';
import type { Role } from '@/lib/db/generated/enums.ts';

const person = (role: Role): Actor => ({ kind: 'user', id: `u-${role}`, label: `${role}@example.test`, role });
const ALL = [...new Set(Object.values(PERMISSIONS).flat())] as Permission[];

function granting(role: Role, permission: Permission, from?: Role): PermissionTable {
  const copy: Record<Role, Permission[]> = {
    admin: [...PERMISSIONS.admin],
    operator: [...PERMISSIONS.operator],
    support: [...PERMISSIONS.support],
    auditor: [...PERMISSIONS.auditor],
  };
  copy[role].push(permission);
  if (from) copy[from] = copy[from].filter((p) => p !== permission);
  return copy;
}

describe('Z1: may, the one question every command asks', () => {
  it('answers a person by the row of the role they act through, for every role and permission', () => {
    for (const role of ROLES) {
      for (const permission of ALL) {
        expect(may(person(role), permission), `${role} ${permission}`).toBe(
          (PERMISSIONS[role] as readonly string[]).includes(permission),
        );
      }
    }
  });

  it('answers a machine actor by its own row, and a person permission never reaches it otherwise', () => {
    expect(may({ kind: 'runtime', id: 'k', label: 'k', workflows: ['*'] }, 'plan.submit')).toBe(true);
    expect(may({ kind: 'runtime', id: 'k', label: 'k', workflows: ['*'] }, 'plan.approve')).toBe(false);
    expect(may({ kind: 'system', id: 's', label: 's' }, 'runtime_keys.manage')).toBe(true);
    expect(may({ kind: 'policy', id: 'p', label: 'p' }, 'replay.request')).toBe(false);
    for (const [kind, allowed] of Object.entries(MACHINE_PERMISSIONS)) {
      expect(allowed, kind).not.toContain('plan.approve');
    }
  });

  it('follows a copy of the table where plan.approve is granted to support and taken from the operator', () => {
    const moved = granting('support', 'plan.approve', 'operator');
    expect(may(person('support'), 'plan.approve', moved)).toBe(true);
    expect(may(person('operator'), 'plan.approve', moved)).toBe(false);
    // The refusal names whoever the table names, so the message cannot go stale either.
    expect(whoMay('plan.approve')).toBe('an operator');
    expect(whoMay('plan.approve', moved)).toBe('a support');
    expect(whoMay('plan.approve', granting('admin', 'plan.approve'))).toBe('an admin or an operator');
  });
});

describe('S7, Z1: the transition table reads its human parties from the permission table', () => {
  it('today: revocation by whoever may effect.revoke, resolution by effect.resolve, bumps by the bump permissions', () => {
    const partiesOf = (rule: string) => TRANSITIONS.find((t) => t.rule === rule)!.by;
    expect(partiesOf('S5 human revocation')).toEqual(rolesWith('effect.revoke'));
    expect(partiesOf('S4 support: sent')).toEqual(rolesWith('effect.resolve'));
    expect(partiesOf('S4 support: not sent')).toEqual(rolesWith('effect.resolve'));
    expect(partiesOf('E2 epoch bump')).toEqual([...rolesWith('effect.bump.request'), 'policy']);
  });

  it('a copy of the permission table that moves effect.revoke to support moves the S5 row with it', () => {
    const table = transitionTable(granting('support', 'effect.revoke', 'operator'));
    expect(checkTransition('done', 'revoked', 'support', table).allowed).toBe(true);
    expect(checkTransition('none', 'revoked', 'support', table).allowed).toBe(true);
    expect(checkTransition('done', 'revoked', 'operator', table).allowed).toBe(false);
    // The runtime's deletion row is a machine row and does not move.
    expect(checkTransition('done', 'revoked', 'runtime', table).allowed).toBe(true);
  });

  it('a copy that grants effect.resolve or effect.bump.approve to another role moves S4 and E2 with it', () => {
    const resolving = transitionTable(granting('auditor', 'effect.resolve'));
    expect(checkTransition('unknown', 'pending', 'auditor', resolving).allowed).toBe(true);
    expect(checkTransition('unknown', 'pending', 'auditor').allowed).toBe(false);
    const bumping = transitionTable(granting('admin', 'effect.bump.approve'));
    expect(checkTransition('done', 'new_epoch', 'admin', bumping).allowed).toBe(true);
    expect(checkTransition('done', 'new_epoch', 'admin').allowed).toBe(false);
  });
});

describe('Z1: no command checks a role inline', () => {
  // A comparison of an actor's role with a role name is a second answer to "who may" beside the
  // table. (Rules about the last all-workflows admin compare a *person's* role, not an actor's.)
  const INLINE = /actor\.role\s*[!=]==|\.role\s*[!=]==\s*'(operator|support|auditor)'/;
  const root = join(import.meta.dirname, '..', '..', 'lib');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'generated' ? [] : files(path);
      return /\.tsx?$/.test(name) ? [path] : [];
    });

  it('finds none under lib/ (the scan itself catches the old form)', () => {
    expect(INLINE.test("if (actor.kind !== 'user' || actor.role !== 'operator')")).toBe(true);
    const offenders = files(root).filter((path) => INLINE.test(readFileSync(path, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
