// Which console role a single sign-on gives, from the groups the identity provider says the person is
// in. This is the one place that turns groups into a role, so that per-workflow grants can later be
// derived here as well.
import type { Role } from '../db/generated/enums.ts';
import { ROLES } from './permissions.ts';

export interface RoleMapping {
  group: string;
  role: Role;
}

/**
 * Parses OIDC_ROLE_MAP ("group=role,group=role"). The order is kept: it is the precedence when a
 * person is in several mapped groups. A malformed entry or an unknown role throws a message naming it,
 * so a typo stops the console at sign-in instead of silently granting nothing.
 */
export function parseRoleMap(text: string): RoleMapping[] {
  const mappings: RoleMapping[] = [];
  for (const entry of text.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const at = trimmed.lastIndexOf('=');
    const group = trimmed.slice(0, at).trim();
    const role = trimmed.slice(at + 1).trim();
    if (at <= 0 || !group) throw new Error(`OIDC_ROLE_MAP: "${trimmed}" is not group=role`);
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new Error(`OIDC_ROLE_MAP: "${role}" in "${trimmed}" is not a role (${ROLES.join(', ')})`);
    }
    mappings.push({ group, role: role as Role });
  }
  return mappings;
}

/** The groups in a claim value: a list of strings, or a single string; anything else holds none. */
export function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return [];
}

/** The role of the first mapping (in configured order) whose group the person is in; null when none. */
export function roleFromGroups(groups: readonly string[], mappings: readonly RoleMapping[]): Role | null {
  const held = new Set(groups);
  return mappings.find((m) => held.has(m.group))?.role ?? null;
}
