// Verifies the whole audit trail (A2): every chain's sequence, links and content hashes, and that
// no chain lost entries at its end. Names the first broken entry.
import type { DbOrTx } from '../db/client.ts';

export type ChainVerification =
  | { ok: true; entries: number; chains: number }
  | { ok: false; entryId: string | null; chain: string; seq: number; problem: string };

export async function verifyAuditTrail(db: DbOrTx): Promise<ChainVerification> {
  const broken = await db.$queryRaw<{ entry_id: bigint | null; chain: string; seq: number; problem: string }[]>`
    SELECT entry_id, chain, seq, problem FROM audit_first_broken()`;
  const first = broken[0];
  if (first) {
    return { ok: false, entryId: first.entry_id === null ? null : String(first.entry_id), chain: first.chain, seq: first.seq, problem: first.problem };
  }
  const [counts] = await db.$queryRaw<{ entries: bigint; chains: bigint }[]>`
    SELECT (SELECT count(*) FROM audit_entry) AS entries, (SELECT count(*) FROM audit_chain_head) AS chains`;
  return { ok: true, entries: Number(counts!.entries), chains: Number(counts!.chains) };
}
