// The one permission table (Z1). Every server action and route handler names the permission it
// needs; the guard checks it on the server where the action runs (Z2). Buttons hidden in the UI
// use the same table, but only as a courtesy.
import type { Role } from '../db/generated/enums.ts';

export const ROLES = ['admin', 'operator', 'support', 'auditor'] as const satisfies readonly Role[];

export type Permission =
  | 'console.read'
  | 'audit.export'
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

export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[role] as readonly Permission[]).includes(permission);
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
