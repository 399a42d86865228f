// Failed sign-ins are rate limited per account and per address (Z4); guesses of the current password
// on the password change count the same way. Lockouts are soft: the limit is a sliding window over
// sign_in_failure rows, so an account opens again by itself once its recent failures age out; nobody
// has to unlock it, and an attacker cannot lock it forever without continuing to fail from somewhere.
//
// A password check takes its slot before it runs (beginAttempt): under locks on the account and the
// address it counts the recent failures and, if any slot is left, writes this attempt's failure row
// at once. Counting first and writing after the slow argon2 check would let guesses sent all at once
// each see the same count and all be checked. A check that succeeds then clears the account's rows.
import type { Db, DbOrTx } from '../db/client.ts';
import { env } from '../env.ts';

export const WINDOW_MINUTES = 15;
export const MAX_PER_ACCOUNT = 5;
export const MAX_PER_ADDRESS = 20;

export const LIMIT_MESSAGES = {
  account: `Too many failed sign-ins for this account. Try again in ${WINDOW_MINUTES} minutes.`,
  address: `Too many failed sign-ins from this address. Try again in ${WINDOW_MINUTES} minutes.`,
} as const;

// Advisory lock classes (the first key; the second is the hashed account or address), apart from the
// other classes the ledger takes (lib/replay/worker.ts, lib/ops/leader.ts, lib/audit/checkpoint.ts).
const ACCOUNT_LOCK = 20586;
const ADDRESS_LOCK = 20587;

export async function signInBlocked(db: DbOrTx, email: string, ip: string): Promise<string | null> {
  const since = new Date(Date.now() - WINDOW_MINUTES * 60_000);
  const [perAccount, perAddress] = await Promise.all([
    db.signInFailure.count({ where: { email, at: { gte: since } } }),
    db.signInFailure.count({ where: { ip, at: { gte: since } } }),
  ]);
  if (perAccount >= MAX_PER_ACCOUNT) return LIMIT_MESSAGES.account;
  if (perAddress >= MAX_PER_ADDRESS) return LIMIT_MESSAGES.address;
  return null;
}

export async function recordFailure(db: DbOrTx, email: string, ip: string): Promise<void> {
  await db.signInFailure.create({ data: { email, ip } });
  // Rows older than a day serve no limit; prune a few on the way so the table stays small.
  await db.$executeRaw`DELETE FROM sign_in_failure WHERE id IN (SELECT id FROM sign_in_failure WHERE at < now() - interval '1 day' LIMIT 100)`;
}

/**
 * Takes one password check for this account from this address: the message to refuse with when the
 * limit is reached (nothing written), else null with this attempt already counted as a failure.
 */
export async function beginAttempt(db: Db, email: string, ip: string): Promise<string | null> {
  return db.$transaction(
    async (tx) => {
      // Always the account first, then the address, so two attempts never wait on each other in a cycle.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACCOUNT_LOCK}::int, hashtext(${email}::text))`;
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ADDRESS_LOCK}::int, hashtext(${ip}::text))`;
      const blocked = await signInBlocked(tx, email, ip);
      if (!blocked) await recordFailure(tx, email, ip);
      return blocked;
    },
    // A burst of attempts queues on the locks; each holds them for a few statements only.
    { maxWait: env().DATABASE_POOL_TIMEOUT_MS, timeout: 30_000 },
  );
}

export async function clearFailures(db: DbOrTx, email: string): Promise<void> {
  await db.signInFailure.deleteMany({ where: { email } });
}
