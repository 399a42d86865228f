// The version of a key a console page would show (Z8), read from the database, for tests that decide
// as a person does: every human decision names the version it was made on.
import type { Db } from '@/lib/db/client.ts';
import { seenEffect, type SeenEffectVersion } from '@/lib/ledger/seen-version.ts';

export async function seenOf(db: Db, key: string): Promise<SeenEffectVersion> {
  const k = await db.effectKey.findUnique({ where: { key } });
  return seenEffect({ epoch: k?.currentEpoch, state: k?.state, changedAt: k?.changedAt });
}

export async function seenOfKeys(db: Db, keys: readonly string[]): Promise<Record<string, SeenEffectVersion>> {
  return Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await seenOf(db, key)] as const)));
}
