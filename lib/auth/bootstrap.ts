// First start: when no admin exists, create one with a one-time password that the start script
// prints once; the admin must choose their own at first sign-in (Z7). Returns null when an admin already exists (nothing is printed again).
import type { Db } from '../db/client.ts';
import { generatePassword } from './password.ts';
import { insertUser } from './users.ts';

export const FIRST_ADMIN_EMAIL = 'admin@localhost.test';

export async function ensureFirstAdmin(db: Db): Promise<{ email: string; password: string } | null> {
  const admins = await db.user.count({ where: { role: 'admin' } });
  if (admins > 0) return null;
  const password = generatePassword();
  const created = await db.$transaction(async (tx) => {
    // Two processes starting at once: the advisory lock makes the second one see the first admin.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('ensure_first_admin'))`;
    if ((await tx.user.count({ where: { role: 'admin' } })) > 0) return false;
    await insertUser(
      tx,
      { email: FIRST_ADMIN_EMAIL, name: 'First admin', role: 'admin', password },
      { kind: 'system', id: 'bootstrap', label: 'first start' },
      { mustChangePassword: true },
    );
    return true;
  });
  return created ? { email: FIRST_ADMIN_EMAIL, password } : null;
}
