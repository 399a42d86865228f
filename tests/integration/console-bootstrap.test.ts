// First start (issue 4): one admin with a one-time password, created once, even by two starts at once.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.ts';
import { ensureFirstAdmin } from '@/lib/auth/bootstrap.ts';
import { verifyPassword } from '@/lib/auth/password.ts';

describe('first admin', () => {
  it('Z1: ensureFirstAdmin creates exactly one admin whose one-time password verifies, and returns null afterwards', async () => {
    const t = await createTestDatabase({ poolSize: 6 });
    const results = await Promise.all([ensureFirstAdmin(t.db), ensureFirstAdmin(t.db)]);
    const created = results.filter((r) => r !== null);
    expect(created).toHaveLength(1);
    const admins = await t.db.user.findMany({ where: { role: 'admin' }, omit: { passwordHash: false } });
    expect(admins).toHaveLength(1);
    expect(admins[0]!.passwordHash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(admins[0]!.passwordHash!, created[0]!.password)).toBe(true);
    expect(await ensureFirstAdmin(t.db)).toBeNull();
    const audit = await t.owner<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_entry WHERE action = 'user.create' AND after_state = 'admin'`,
    );
    expect(audit.rows[0]?.n).toBe(1);
  });
});
