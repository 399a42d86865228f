// Signs the head of the audit tree (docs/AUDIT.md, "Signed tree heads and witnesses") as a C2SP
// checkpoint note, with the Ed25519 key of AUDIT_SIGNING_KEY, and only when the head extends the head
// this signer signed last. That last head comes from the signer's state file (./state-file.ts), not
// from the database: the database owner can rewrite the trail, rebuild the tree tables and delete the
// stored heads, and would then get a freshly signed rewritten history from a signer that trusted them.
// Before signing a larger tree the signer checks an RFC 9162 consistency proof from its last head to
// the new one; a tree that shrank, changed at the same size or does not extend is refused: a log line,
// the ledger_audit_tree_sign_refusals_total metric, an audit entry when the database takes one, and no
// signature.
import type { KeyObject } from 'node:crypto';
import type { Db, DbOrTx } from '@/lib/db/client.ts';
import type { Actor } from '@/lib/core/actor.ts';
import { metrics } from '@/lib/ops/metrics.ts';
import { appendAudit, auditRefusal } from '../append.ts';
import { consistencyAt, rootAt, treeSize } from './store.ts';
import { readStateNote, writeStateNote } from './state-file.ts';
import { verifyConsistency } from '@/lib/sdk/audit/merkle.ts';
import {
  checkpointBody,
  cosign,
  formatNote,
  openTreeHead,
  verifierFor,
  type OpenedHead,
} from '@/lib/sdk/audit/signed-note.ts';
import { createPublicKey } from 'node:crypto';

export const TREE_CHAIN = 'audit:tree';
const SIGNER: Actor = { kind: 'system', id: 'audit-tree', label: 'audit tree signer' };
/** Serializes signing rounds (the worker leader and `npm run audit:tree`): advisory lock (class, key). */
const SIGN_LOCK = [20585, 3] as const;

export interface TreeSigner {
  privateKey: KeyObject;
  /** The log's name: the checkpoint's origin line and the signature's key name. */
  origin: string;
  /** The file holding the last signed note. */
  statePath: string;
}

export type SignResult =
  | { kind: 'signed'; note: string; size: number }
  | { kind: 'unchanged'; size: number }
  | { kind: 'refused'; problem: string; size: number; signedSize: number };

/** The last head this signer signed, checked against its own key (a damaged state file is an error). */
function lastSigned(signer: TreeSigner): { note: string; head: OpenedHead } | null {
  const note = readStateNote(signer.statePath);
  if (note === null) return null;
  const log = verifierFor(signer.origin, createPublicKey(signer.privateKey));
  return { note, head: openTreeHead(note, { log }) };
}

export async function signTreeHead(
  db: Db,
  signer: TreeSigner,
  options: { log?: (line: string) => void; now?: () => number } = {},
): Promise<SignResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const result = await db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SIGN_LOCK[0]}::int, ${SIGN_LOCK[1]}::int)`;
      const last = lastSigned(signer);
      const size = await treeSize(tx);
      const root = await rootAt(tx, size);
      const refuse = (problem: string): SignResult => ({ kind: 'refused', problem, size, signedSize: last!.head.size });
      if (last) {
        const m = last.head.size;
        if (size < m) return refuse(`the tree has ${size} leaves, the head signed last has ${m}`);
        if (size === m) {
          if (!root.equals(last.head.root)) return refuse(`the tree's root at ${m} leaves is not the one signed`);
          await publish(tx, last.note, m, root);
          return { kind: 'unchanged', size } as const;
        }
        const proof = await consistencyAt(tx, m, size);
        if (!verifyConsistency(m, size, last.head.root, root, proof))
          return refuse(`the tree of ${size} leaves does not extend the head signed last (${m} leaves)`);
        // The signer's own audit entries alone do not call for a new head (else every round signs one).
        const [{ moved }] = await tx.$queryRaw<[{ moved: boolean }]>`
          SELECT EXISTS (SELECT 1 FROM audit_tree_leaf l JOIN audit_entry e ON e.id = l.entry_id
                          WHERE l.idx >= ${m} AND l.idx < ${size} AND e.action <> 'audit.tree_head') AS moved`;
        if (!moved) return { kind: 'unchanged', size: m } as const;
      }
      const now = Math.floor((options.now ?? Date.now)() / 1000);
      const time = Math.max(now, last?.head.time ?? 0);
      const body = checkpointBody({ origin: signer.origin, size, root });
      const note = formatNote({ body, signatures: [cosign(body, time, signer.origin, signer.privateKey)] });
      // The state file first: a head published but not remembered could be signed over differently.
      writeStateNote(signer.statePath, note);
      await publish(tx, note, size, root);
      await appendAudit(tx, {
        chain: TREE_CHAIN,
        actor: SIGNER,
        action: 'audit.tree_head',
        subjectType: 'audit',
        subjectId: 'tree',
        detail: { size, root: root.toString('base64'), origin: signer.origin, time },
      });
      return { kind: 'signed', note, size } as const;
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
  if (result.kind === 'signed') metrics().auditTreeSignedSize.set(result.size);
  if (result.kind === 'refused') await alert(db, result, log);
  return result;
}

/** Stores the note for the API unless the newest stored head is already this one. */
async function publish(tx: DbOrTx, note: string, size: number, root: Buffer) {
  const [stored] = await tx.$queryRaw<{ note: string }[]>`
    SELECT note FROM audit_tree_head ORDER BY size DESC, id DESC LIMIT 1`;
  if (stored?.note === note) return;
  await tx.$executeRaw`INSERT INTO audit_tree_head (size, root, note) VALUES (${size}, ${root}, ${note})`;
}

async function alert(db: Db, r: Extract<SignResult, { kind: 'refused' }>, log: (line: string) => void) {
  log(`audit tree: REFUSED to sign: ${r.problem}`);
  metrics().auditTreeRefusals.inc();
  try {
    await auditRefusal(db, {
      chain: TREE_CHAIN,
      actor: SIGNER,
      action: 'audit.tree_head',
      subjectType: 'audit',
      subjectId: 'tree',
      why: r.problem,
      detail: { size: r.size, signed_size: r.signedSize },
    });
  } catch (error) {
    log(`audit tree: the refusal could not be audited: ${(error as Error).message}`);
  }
}
