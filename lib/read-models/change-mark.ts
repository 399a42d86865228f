// A cheap "has anything changed?" for figures that take a pass over a whole run. Every state change
// writes its audit entry in the same transaction (A1), so the newest entry id moves whenever a count,
// a P4 or a replay set can have moved. Reads of the trail and of the agent API are audited too but
// change nothing; they are skipped, so a crowd of people reading an incident does not force the
// figures to be recomputed. Walking the primary key backwards past the newest reads costs a few index
// entries, not a pass over the run.
import { sqlRows, type DbOrTx } from '@/lib/db/client.ts';

const READ_ACTIONS = ['audit.read', 'run.read', 'effect.read'];

export async function changeMark(db: DbOrTx): Promise<string> {
  // The output is named `mark`, not `id`: ORDER BY a name that is also an output column sorts by the
  // output, and the text '99' sorts after '114'.
  const rows = await sqlRows<{ mark: string | null }>(
    db,
    `SELECT id::text AS mark FROM audit_entry WHERE action <> ALL($1::text[]) ORDER BY audit_entry.id DESC LIMIT 1`,
    [READ_ACTIONS],
  );
  return rows[0]?.mark ?? '0';
}
