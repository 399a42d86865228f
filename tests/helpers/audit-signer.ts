// The signer's own connection in tests: a login that is a member of ledger_audit_signer, the only role
// besides the owner that may store checkpoints and tree heads (docs/AUDIT.md, "Who may write
// signatures"). Roles are cluster-wide, so each test file's login has its own name and is dropped after.
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { createDb, type Db } from '@/lib/db/client.ts';
import { withCredentials } from '@/lib/db/roles.ts';
import type { TestDatabase } from './db.ts';

export async function createSignerDb(t: TestDatabase): Promise<{ db: Db; url: string }> {
  const user = `signer_${process.pid}_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await t.owner(`CREATE ROLE ${user} LOGIN PASSWORD '${password}' IN ROLE ledger_audit_signer`);
  const url = withCredentials(t.ownerUrl, user, password);
  const db = createDb(url, 4);
  afterAll(async () => {
    await db.$disconnect();
    await t.owner(`DROP ROLE IF EXISTS ${user}`).catch(() => undefined);
  });
  return { db, url };
}
