// Verifies the whole audit trail (A2): every chain's sequence, links and content hashes, and that
// no chain lost entries at its end. Names the first broken entry.
// One statement (audit_verify(), one snapshot): the counts reported on success are those of the
// entries and chains that were verified, not of a later read.
import type { DbOrTx } from '../db/client.ts';

export type ChainVerification =
  | { ok: true; entries: number; chains: number }
  | { ok: false; entryId: string | null; chain: string; seq: number; problem: string };

export async function verifyAuditTrail(db: DbOrTx): Promise<ChainVerification> {
  const [row] = await db.$queryRaw<
    {
      entry_id: bigint | null;
      chain: string | null;
      seq: number | null;
      problem: string | null;
      entries: bigint;
      chains: bigint;
    }[]
  >`
    SELECT entry_id, chain, seq, problem, entries, chains FROM audit_verify()`;
  if (!row) throw new Error('audit_verify() returned no row');
  if (row.problem !== null) {
    return {
      ok: false,
      entryId: row.entry_id === null ? null : String(row.entry_id),
      chain: row.chain!,
      seq: row.seq!,
      problem: row.problem,
    };
  }
  return { ok: true, entries: Number(row.entries), chains: Number(row.chains) };
}
