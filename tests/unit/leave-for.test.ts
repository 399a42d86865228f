// Where a person the console turned away goes: one pure function (lib/auth/leave-for.ts) decides it
// for the server pages, a console route opened as a page, and the client views
// (tests/unit/console-views.test.ts covers the views' refusals). A scan holds the other doors to it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leaveFor } from '@/lib/auth/leave-for.ts';

describe('leaveFor, as the server pages and routes ask it', () => {
  it('a page whose session is gone: to sign in with the reason, and back to the page when it was named', () => {
    expect(leaveFor({ status: 401, reason: 'session_revoked' }, '/plans/p1')).toBe(
      '/sign-in?reason=session_revoked&callbackUrl=%2Fplans%2Fp1',
    );
    expect(leaveFor({ status: 401, reason: 'no_session' })).toBe('/sign-in?reason=no_session');
    expect(leaveFor({ status: 401 })).toBe('/sign-in');
  });

  it('a route opened as a page (a link in an email): to sign in and back to it', () => {
    expect(leaveFor({ status: 401 }, '/inbox/open/n1')).toBe('/sign-in?callbackUrl=%2Finbox%2Fopen%2Fn1');
  });

  it('Z7: a password someone else chose goes to its change before anything, wherever it was refused', () => {
    expect(leaveFor({ status: 403, reason: 'password_change' })).toBe('/account/password');
    expect(leaveFor({ status: 403, reason: 'password_change' }, '/audit')).toBe('/account/password');
  });

  it('no role that may open it: the forbidden page, never a way back that would refuse again', () => {
    expect(leaveFor({ status: 403 }, '/admin/users')).toBe('/forbidden');
    expect(leaveFor({ status: 403, reason: 'whatever' })).toBe('/forbidden');
  });
});

describe('no other door decides it', () => {
  const root = join(import.meta.dirname, '..', '..');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'generated' || name === 'node_modules' ? [] : files(path);
      return /\.tsx?$/.test(name) ? [path] : [];
    });
  // A refusal's destination written out by hand: the forbidden page, or sign-in with a way back.
  const BY_HAND = /['"`]\/forbidden['"`]|\/sign-in\?[^'"`]*callbackUrl=\$\{/;

  it('finds the forbidden page and sign-in-with-a-way-back only in lib/auth/leave-for.ts', () => {
    expect(BY_HAND.test("redirect('/forbidden')")).toBe(true);
    expect(BY_HAND.test('`/sign-in?reason=${r}&callbackUrl=${encodeURIComponent(x)}`')).toBe(true);
    const offenders = ['lib', 'app', 'components']
      .flatMap((dir) => files(join(root, dir)))
      .filter((path) => BY_HAND.test(readFileSync(path, 'utf8')))
      .map((path) => relative(root, path));
    expect(offenders).toEqual(['lib/auth/leave-for.ts']);
  });
});
