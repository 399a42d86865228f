// The signed checkpoints one viewer may download (A2, Z1). A checkpoint is per chain: it names the
// chain, how many entries it holds (seq) and the hash of the last one. A person scoped to some
// workflows gets a checkpoint only when every entry it covers (the chain's seq 1 to the signed seq) is
// one they may see, that is, about a run of their workflows: a chain of another workflow, or about no
// run (users, keys, tools, the trail itself), is not named to them, nor is the length of a chain that
// holds entries they may not see. What they get is exactly the checkpoints their own export can be
// checked against: each one's entries are all in it.
import { listCheckpoints } from '../audit/checkpoint.ts';
import type { Db } from '../db/client.ts';
import { Prisma } from '../db/client.ts';
import type { SignedCheckpoint } from '../sdk/audit/checkpoint-signature.ts';
import { runInScopeSql, workflowInScopeSql, type WorkflowScope } from '@/lib/auth/grants.ts';

export async function checkpointsFor(db: Db, scope: WorkflowScope): Promise<SignedCheckpoint[]> {
  if (scope.all) return listCheckpoints(db);
  // Candidate chains first, from the viewer's runs (the audit_entry run index), so a person with one
  // workflow does not pay for every chain of the trail; then, per checkpoint, no entry up to its seq
  // may lie outside the scope (the (chain, seq) index).
  return db.$queryRaw<SignedCheckpoint[]>`
    WITH seen AS (
      SELECT DISTINCT a.chain FROM audit_entry a JOIN run r ON r.id = a.run_id
       WHERE ${workflowInScopeSql(scope, Prisma.sql`r.workflow`)})
    SELECT c.chain, c.seq, c.hash,
           to_char(c.signed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS signed_at,
           c.key_id, c.signature
      FROM audit_checkpoint c JOIN seen ON seen.chain = c.chain
     WHERE NOT EXISTS (
             SELECT 1 FROM audit_entry h
              WHERE h.chain = c.chain AND h.seq <= c.seq AND NOT ${runInScopeSql(scope, Prisma.sql`h.run_id`)})
     ORDER BY c.id`;
}
