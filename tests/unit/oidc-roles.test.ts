// Z1: the role a single sign-on gives comes from OIDC_ROLE_MAP, first matching entry first.
import { describe, expect, it } from 'vitest';
import { groupsOf, parseRoleMap, roleFromGroups } from '@/lib/auth/oidc-roles.ts';

describe('Z1: OIDC_ROLE_MAP', () => {
  it('keeps the configured order as precedence', () => {
    const map = parseRoleMap(' ledger-admins=admin, ledger-ops = operator ,,ledger-support=support');
    expect(map).toEqual([
      { group: 'ledger-admins', role: 'admin' },
      { group: 'ledger-ops', role: 'operator' },
      { group: 'ledger-support', role: 'support' },
    ]);
    expect(roleFromGroups(['ledger-support', 'ledger-ops'], map)).toBe('operator');
    expect(roleFromGroups(['ledger-support'], map)).toBe('support');
    expect(roleFromGroups(['marketing'], map)).toBeNull();
    expect(roleFromGroups([], parseRoleMap(''))).toBeNull();
  });

  it('allows "=" inside a group name (the last one separates the role)', () => {
    expect(parseRoleMap('team=ledger=operator')).toEqual([{ group: 'team=ledger', role: 'operator' }]);
  });

  it('names a malformed entry or an unknown role', () => {
    expect(() => parseRoleMap('ledger-ops')).toThrow('"ledger-ops" is not group=role');
    expect(() => parseRoleMap('=operator')).toThrow('is not group=role');
    expect(() => parseRoleMap('ledger-ops=superuser')).toThrow('"superuser" in "ledger-ops=superuser" is not a role');
  });

  it('reads groups from a list or a single string and ignores anything else', () => {
    expect(groupsOf(['a', 'b', 3, null])).toEqual(['a', 'b']);
    expect(groupsOf('a')).toEqual(['a']);
    expect(groupsOf(undefined)).toEqual([]);
    expect(groupsOf({ a: 1 })).toEqual([]);
  });
});
