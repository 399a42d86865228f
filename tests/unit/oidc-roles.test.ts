// Z1: the role a single sign-on gives comes from OIDC_ROLE_MAP, first matching entry first.
import { describe, expect, it } from 'vitest';
import { groupsOf, parseRoleMap, roleFromGroups } from '@/lib/auth/oidc-roles.ts';
import { env, resetEnvCache } from '@/lib/env.ts';

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

  it('reads a JSON list, in order, with group names holding commas, "=" and spaces exactly as written', () => {
    const map = parseRoleMap(
      ' [{"group": "Ledger, Admins", "role": "admin"}, {"group": "ops=team ", "role": "operator"},' +
        ' {"group": "123", "role": "support"}, {"group": "ledger-ops", "role": "auditor"}]',
    );
    expect(map).toEqual([
      { group: 'Ledger, Admins', role: 'admin' },
      { group: 'ops=team ', role: 'operator' },
      { group: '123', role: 'support' },
      { group: 'ledger-ops', role: 'auditor' },
    ]);
    expect(roleFromGroups(['Ledger', ' Admins'], map)).toBeNull();
    expect(roleFromGroups(['ledger-ops', 'Ledger, Admins'], map)).toBe('admin');
    expect(roleFromGroups(['ledger-ops', '123'], map)).toBe('support');
    expect(parseRoleMap('[]')).toEqual([]);
  });

  it.each([
    ['[{"group": "a", "role": "admin"}', 'is not valid JSON'],
    ['{"Ledger, Ops": "operator"}', 'must be a list of {"group": "...", "role": "..."}'],
    ['[["Ledger, Ops", "operator"]]', 'entry 1 is not an object'],
    ['[{"group": "a", "role": "admin"}, {"group": "", "role": "admin"}]', 'entry 2 needs a non-empty "group"'],
    ['[{"group": 7, "role": "admin"}]', 'entry 1 needs a non-empty "group"'],
    ['[{"group": "a", "role": "root"}]', '"root" in entry 1 is not a role (admin, operator, support, auditor)'],
    ['[{"group": "a"}]', 'entry 1 has no role (admin, operator, support, auditor)'],
    ['[{"group": "a", "rol": "admin", "role": "admin"}]', 'entry 1 has "rol": only "group" and "role"'],
  ])('refuses the malformed JSON %s, saying what is wrong', (text, message) => {
    expect(() => parseRoleMap(text)).toThrow(message);
  });

  it('names a malformed entry or an unknown role', () => {
    expect(() => parseRoleMap('ledger-ops')).toThrow('"ledger-ops" is not group=role');
    expect(() => parseRoleMap('=operator')).toThrow('is not group=role');
    expect(() => parseRoleMap('ledger-ops=superuser')).toThrow('"superuser" in "ledger-ops=superuser" is not a role');
  });

  it('refuses a malformed map when the environment is read, naming the variable and the entry', () => {
    try {
      process.env.OIDC_ROLE_MAP = 'ledger-ops=operator,Ledger, Ops=admin';
      resetEnvCache();
      expect(() => env()).toThrow('Invalid environment: OIDC_ROLE_MAP: "Ledger" is not group=role');
      process.env.OIDC_ROLE_MAP = '[{"group": "Ledger, Ops", "role": "admin"}, {"group": "x", "role": "boss"}]';
      resetEnvCache();
      expect(() => env()).toThrow('Invalid environment: OIDC_ROLE_MAP: "boss" in entry 2 is not a role');
      process.env.OIDC_ROLE_MAP = '[{"group": "Ledger, Ops", "role": "admin"}]';
      resetEnvCache();
      expect(env().OIDC_ROLE_MAP).toEqual([{ group: 'Ledger, Ops', role: 'admin' }]);
    } finally {
      delete process.env.OIDC_ROLE_MAP;
      resetEnvCache();
    }
  });

  it('reads groups from a list or a single string and ignores anything else', () => {
    expect(groupsOf(['a', 'b', 3, null])).toEqual(['a', 'b']);
    expect(groupsOf('a')).toEqual(['a']);
    expect(groupsOf(undefined)).toEqual([]);
    expect(groupsOf({ a: 1 })).toEqual([]);
  });
});
