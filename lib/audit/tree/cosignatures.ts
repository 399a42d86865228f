// Witness cosignatures submitted to the ledger (docs/AUDIT.md, "Witnesses"): a witness POSTs the head
// it cosigned with its own signature line, and the ledger stores it to serve with the head, so an
// auditor fetching the head gets the witnesses' word too. The submission is authenticated by the
// cosignature itself: a line counts only when it verifies against one of the witness keys the ledger
// is configured with (AUDIT_WITNESS_KEYS), over a head the ledger's own key signed. Readers verify
// every line again against the witness keys they trust; nothing here is trusted by them.
import type { Db } from '@/lib/db/client.ts';
import type { Actor, RequestMeta } from '@/lib/core/actor.ts';
import { forbidden, invalid } from '@/lib/core/errors.ts';
import {
  formatNote,
  openTreeHead,
  parseCheckpointBody,
  parseNote,
  parseVkey,
  verifySignature,
  type Note,
  type NoteVerifier,
} from '@/lib/sdk/audit/signed-note.ts';
import { appendAudit, auditRefusal } from '../append.ts';
import { TREE_CHAIN } from './signer.ts';

/** AUDIT_WITNESS_KEYS: vkeys separated by commas or whitespace. */
export function witnessKeysFrom(setting: string | undefined): NoteVerifier[] {
  return (setting ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(parseVkey);
}

export interface CosignatureInput {
  note: string;
  log: NoteVerifier;
  witnesses: NoteVerifier[];
  actor: Extract<Actor, { kind: 'runtime' }>;
  request?: RequestMeta;
}

export async function submitCosignature(
  db: Db,
  input: CosignatureInput,
): Promise<{ size: number; witnesses: string[] }> {
  let note: Note;
  try {
    note = parseNote(input.note);
    parseCheckpointBody(note.body);
  } catch (error) {
    throw invalid('note', `not a signed tree head: ${(error as Error).message}`);
  }
  const { size, root } = parseCheckpointBody(note.body);
  const stored = await db.$queryRaw<{ note: string }[]>`
    SELECT note FROM audit_tree_head WHERE size = ${size} AND root = ${root} ORDER BY id`;
  const signedByLog = stored.some((r) => {
    try {
      return openTreeHead(r.note, { log: input.log }).body === note.body;
    } catch {
      return false;
    }
  });
  if (!signedByLog) throw invalid('note', `the note is not a head of ${size} leaves this ledger signed`);
  const accepted: { name: string; note: string }[] = [];
  for (const s of note.signatures) {
    const known = input.witnesses.find((w) => w.name === s.name && w.keyId === s.keyId);
    if (!known) continue;
    if (verifySignature(note.body, s, known) === null)
      throw invalid('note', `the cosignature of ${s.name} does not verify with its configured key`);
    accepted.push({ name: s.name, note: formatNote({ body: note.body, signatures: [s] }) });
  }
  if (!accepted.length) {
    await auditRefusal(db, {
      chain: TREE_CHAIN,
      actor: input.actor,
      action: 'audit.tree_cosign',
      subjectType: 'audit',
      subjectId: 'tree',
      why: 'no cosignature line from a configured witness key',
      detail: { size },
      request: input.request,
    });
    throw forbidden('the note carries no cosignature from a witness key this ledger is configured with');
  }
  // The stored rows and their audit entry in one transaction; a line already stored is not stored twice.
  await db.$transaction(async (tx) => {
    for (const a of accepted)
      await tx.$executeRaw`
        INSERT INTO audit_tree_cosignature (size, root, witness, note)
        SELECT ${size}, ${root}, ${a.name}, ${a.note}
         WHERE NOT EXISTS (SELECT 1 FROM audit_tree_cosignature WHERE size = ${size} AND note = ${a.note})`;
    await appendAudit(tx, {
      chain: TREE_CHAIN,
      actor: input.actor,
      action: 'audit.tree_cosign',
      subjectType: 'audit',
      subjectId: 'tree',
      detail: { size, root: root.toString('base64'), witnesses: accepted.map((a) => a.name) },
      request: input.request,
    });
  });
  return { size, witnesses: accepted.map((a) => a.name) };
}
