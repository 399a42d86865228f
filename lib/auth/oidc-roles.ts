// Which console role a single sign-on gives, from the groups the identity provider says the person is
// in. This is the one place that turns groups into a role, so that per-workflow grants can later be
// derived here as well.
import type { Role } from '../db/generated/enums.ts';
import { ROLES } from '../core/permissions.ts';

export interface RoleMapping {
  group: string;
  role: Role;
}

const ROLE_LIST = ROLES.join(', ');

function roleOf(value: unknown, where: string): Role {
  if (typeof value === 'string' && (ROLES as readonly string[]).includes(value)) return value as Role;
  if (value === undefined) throw new Error(`${where} has no role (${ROLE_LIST})`);
  throw new Error(`${JSON.stringify(value)} in ${where} is not a role (${ROLE_LIST})`);
}

/**
 * Parses OIDC_ROLE_MAP, in either of two forms. The order is kept in both: it is the precedence when
 * a person is in several mapped groups. A malformed entry or an unknown role throws a message naming
 * it, so a typo stops the console at start instead of silently granting nothing.
 * - JSON, when the value starts with "[": a list of {"group": ..., "role": ...}. It can name any group,
 *   commas, "=" and spaces included, taken exactly as written. A list and not an object, because an
 *   object's order is not kept for every key (JavaScript moves number-like keys first).
 * - The short form "group=role,group=role": a group cannot contain a comma; the last "=" separates the
 *   role, and spaces around names are dropped.
 */
export function parseRoleMap(text: string): RoleMapping[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseJsonRoleMap(trimmed);
  return parseShortRoleMap(trimmed);
}

function parseJsonRoleMap(text: string): RoleMapping[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`starts with "${text[0]}" but is not valid JSON (${(error as Error).message})`, { cause: error });
  }
  if (!Array.isArray(value)) {
    throw new Error('as JSON it must be a list of {"group": "...", "role": "..."}, first match first');
  }
  return value.map((entry: unknown, index) => {
    const where = `entry ${index + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw new Error(`${where} is not an object {"group": "...", "role": "..."}`);
    }
    const extra = Object.keys(entry).filter((key) => key !== 'group' && key !== 'role');
    if (extra.length) throw new Error(`${where} has ${extra.map((k) => `"${k}"`).join(', ')}: only "group" and "role"`);
    const { group, role } = entry as { group?: unknown; role?: unknown };
    if (typeof group !== 'string' || !group.trim()) throw new Error(`${where} needs a non-empty "group" string`);
    return { group, role: roleOf(role, where) };
  });
}

function parseShortRoleMap(text: string): RoleMapping[] {
  const mappings: RoleMapping[] = [];
  for (const entry of text.split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const at = trimmed.lastIndexOf('=');
    const group = trimmed.slice(0, at).trim();
    const role = trimmed.slice(at + 1).trim();
    if (at <= 0 || !group) throw new Error(`"${trimmed}" is not group=role`);
    mappings.push({ group, role: roleOf(role, `"${trimmed}"`) });
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
