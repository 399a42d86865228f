// The one permission table (Z1). Every server action and route handler names the permission it
// needs; the guard checks it on the server where the action runs (Z2), and the ledger's commands ask
// the same table through `may` (for a person: their role's row; for a machine actor: its row of
// MACHINE_PERMISSIONS), so a permission granted to another role here is granted everywhere at once.
// The transition table's human parties are read from here too (lib/ledger/transitions.ts). Buttons
// hidden in the UI use the same table, but only as a courtesy.
import type { Actor } from './actor.ts';
import type { Role } from '../db/generated/enums.ts';

export const ROLES = ['admin', 'operator', 'support', 'auditor'] as const satisfies readonly Role[];

export type Permission =
  | 'console.read'
  | 'audit.export'
  | 'plan.submit'
  | 'plan.approve'
  | 'effect.revoke'
  | 'effect.bump.request'
  | 'effect.bump.approve'
  | 'effect.resolve'
  | 'users.manage'
  | 'runtime_keys.manage'
  | 'tools.manage'
  | 'replay.request'
  | 'replay.approve'
  | 'replay.control';

export const PERMISSIONS = {
  admin: ['console.read', 'audit.export', 'users.manage', 'runtime_keys.manage', 'tools.manage'],
  operator: [
    'console.read',
    'plan.submit',
    'plan.approve',
    'effect.revoke',
    'effect.bump.request',
    'effect.bump.approve',
    'replay.request',
    'replay.approve',
    'replay.control',
  ],
  support: ['console.read', 'effect.resolve'],
  auditor: ['console.read', 'audit.export'],
} as const satisfies Record<Role, readonly Permission[]>;

export type PermissionTable = Record<Role, readonly Permission[]>;

export function can(role: Role, permission: Permission, table: PermissionTable = PERMISSIONS): boolean {
  return table[role].includes(permission);
}

/** The roles whose row holds `permission`, in table order. */
export function rolesWith(permission: Permission, table: PermissionTable = PERMISSIONS): Role[] {
  return ROLES.filter((role) => can(role, permission, table));
}

export type MachineKind = Exclude<Actor['kind'], 'user'>;

/** What the ledger's own actors may do beyond the transition table (which speaks for the effect
 *  moves): an agent runtime submits its run's plan; the system (seeding, bootstrap, declarative
 *  setup) submits plans and administers runtime keys. Nothing else reaches a person's permission. */
export const MACHINE_PERMISSIONS = {
  runtime: ['plan.submit'],
  executor: [],
  reconciler: [],
  policy: [],
  system: ['plan.submit', 'runtime_keys.manage'],
} as const satisfies Record<MachineKind, readonly Permission[]>;

/** Whether `actor` may do `permission`: the one question every command asks (Z1). A person is
 *  answered by the row of the role they act through, a machine actor by its own row. */
export function may(actor: Actor, permission: Permission, table: PermissionTable = PERMISSIONS): boolean {
  if (actor.kind === 'user') return can(actor.role, permission, table);
  return (MACHINE_PERMISSIONS[actor.kind] as readonly Permission[]).includes(permission);
}

/** "an operator", "an admin or an operator": who may, as a refusal names them. */
export function whoMay(permission: Permission, table: PermissionTable = PERMISSIONS): string {
  const roles = rolesWith(permission, table);
  if (roles.length === 0) return 'no one';
  return roles.map((role) => `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`).join(' or ');
}

export function roleLabel(role: Role): string {
  switch (role) {
    case 'admin':
      return 'Admin';
    case 'operator':
      return 'Operator';
    case 'support':
      return 'Support';
    case 'auditor':
      return 'Auditor';
    default:
      return role satisfies never;
  }
}
