// Failed sign-ins are rate limited per account and per address (Z4). Lockouts are soft: the limit
// is a sliding window over sign_in_failure rows, so an account opens again by itself once its
// recent failures age out; nobody has to unlock it, and an attacker cannot lock it forever
// without continuing to fail from somewhere.
import type { DbOrTx } from '../db/client.ts';

export const WINDOW_MINUTES = 15;
export const MAX_PER_ACCOUNT = 5;
export const MAX_PER_ADDRESS = 20;

export async function signInBlocked(db: DbOrTx, email: string, ip: string): Promise<string | null> {
  const since = new Date(Date.now() - WINDOW_MINUTES * 60_000);
  const [perAccount, perAddress] = await Promise.all([
    db.signInFailure.count({ where: { email, at: { gte: since } } }),
    db.signInFailure.count({ where: { ip, at: { gte: since } } }),
  ]);
  if (perAccount >= MAX_PER_ACCOUNT)
    return `Too many failed sign-ins for this account. Try again in ${WINDOW_MINUTES} minutes.`;
  if (perAddress >= MAX_PER_ADDRESS)
    return `Too many failed sign-ins from this address. Try again in ${WINDOW_MINUTES} minutes.`;
  return null;
}

export async function recordFailure(db: DbOrTx, email: string, ip: string): Promise<void> {
  await db.signInFailure.create({ data: { email, ip } });
  // Rows older than a day serve no limit; prune a few on the way so the table stays small.
  await db.$executeRaw`DELETE FROM sign_in_failure WHERE id IN (SELECT id FROM sign_in_failure WHERE at < now() - interval '1 day' LIMIT 100)`;
}

export async function clearFailures(db: DbOrTx, email: string): Promise<void> {
  await db.signInFailure.deleteMany({ where: { email } });
}
