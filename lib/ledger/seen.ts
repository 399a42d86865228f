// Decisions on what the person saw (Z8). A console decision carries the version of its target the
// person was shown; the command compares it under the row lock of the transaction that writes, and
// when the target moved meanwhile it writes nothing and throws a StaleDecision naming what changed,
// by whom and when, together with the version to decide again on.
import { z } from 'zod';
import { sqlRows, type DbOrTx, type Prisma } from '@/lib/db/client.ts';
import { LedgerError } from './errors.ts';
import { epochField } from './fields.ts';
import { describeStale, type StaleFacts } from './seen-version.ts';
import { EFFECT_STATES } from './transitions.ts';

/** What an effect looked like on the page: its current epoch, that epoch's state and when it last
 *  changed (ISO, milliseconds). `none` is a planned target nobody has claimed yet. */
export const seenEffectField = z.strictObject({
  epoch: epochField,
  state: z.enum([...EFFECT_STATES, 'none']),
  changedAt: z.iso.datetime().nullable(),
});
export type SeenEffect = z.output<typeof seenEffectField>;

/** A decision refused because its target changed after the person looked (409, nothing written). */
export class StaleDecision extends LedgerError {
  readonly stale: StaleFacts;
  constructor(facts: StaleFacts) {
    super('conflict', `${describeStale(facts)}${facts.changedAt ? ` at ${facts.changedAt}` : ''}`, { stale: facts });
    this.stale = facts;
  }
}

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

interface HeadRow {
  current_epoch: number;
  state: string;
  changed_by: string;
  changed_at: Date;
}

/**
 * Locks the key's current effect row and its head (the order every ledger function takes them, so
 * no deadlock), and throws StaleDecision unless they still match what the person saw. Call inside
 * the transaction that then writes the decision.
 */
export async function lockSeenEffect(tx: DbOrTx, key: string, seen: SeenEffect): Promise<void> {
  const [current] = await sqlRows<{ current_epoch: number }>(
    tx,
    `SELECT current_epoch FROM effect_key WHERE key = $1`,
    [key],
  );
  let head: HeadRow | undefined;
  if (current) {
    await sqlRows(tx, `SELECT id FROM effect WHERE key = $1 AND epoch = $2 FOR UPDATE`, [key, current.current_epoch]);
    [head] = await sqlRows<HeadRow>(
      tx,
      `SELECT current_epoch, state::text AS state, changed_by, changed_at FROM effect_key WHERE key = $1 FOR UPDATE`,
      [key],
    );
  }
  const now = head
    ? { state: head.state, epoch: head.current_epoch, changedAt: iso(head.changed_at) }
    : { state: 'none', epoch: 1, changedAt: null };
  const same =
    now.state === seen.state &&
    now.epoch === seen.epoch &&
    (now.changedAt === null || seen.changedAt === null
      ? now.changedAt === seen.changedAt
      : new Date(seen.changedAt).getTime() === new Date(now.changedAt).getTime());
  if (same) return;
  throw new StaleDecision({
    subjectType: 'effect',
    subjectId: key,
    was: seen,
    now,
    changedBy: head?.changed_by ?? null,
    changedAt: now.changedAt,
    retry: { seen: now },
  });
}

/**
 * Runs `write` in one transaction after lockSeenEffect. A LedgerError from `write` (a refusal that
 * ledger_transition audited, A4) still commits that refusal's audit entry, then is thrown; a stale
 * version rolls back with nothing written.
 */
export async function decideOnSeenEffect<T>(
  db: DbOrTx,
  key: string,
  seen: SeenEffect | undefined,
  write: (db: DbOrTx) => Promise<T>,
): Promise<T> {
  if (!seen) return write(db);
  const run = async (tx: Prisma.TransactionClient) => {
    await lockSeenEffect(tx, key, seen);
    try {
      return { ok: true as const, value: await write(tx) };
    } catch (error) {
      if (error instanceof LedgerError) return { ok: false as const, error };
      throw error;
    }
  };
  // Generous limits: the machine may be loaded, and the transaction holds only this key's two rows.
  const outcome =
    '$transaction' in db ? await db.$transaction(run, { maxWait: 30_000, timeout: 60_000 }) : await run(db);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
