// A witness of the audit tree (docs/AUDIT.md, "Witnesses"): an independent cosigner with its own
// Ed25519 key and its own state file, run by someone other than the database owner (`npm run
// witness`). Each round it fetches the ledger's newest signed head over HTTP, checks the log's
// signature, fetches a consistency proof from the head it cosigned last and checks it, and only then
// cosigns (C2SP tlog-cosignature, timestamped Ed25519). Its state file is the cosigned note itself:
// the log's signature and its own, which auditors use to require a quorum of witnesses. A head that
// shrank, changed at the same size or does not extend is refused and nothing is signed.
import type { KeyObject } from 'node:crypto';
import { verifyConsistency } from '@/lib/sdk/audit/merkle.ts';
import {
  cosign,
  mergeNotes,
  formatNote,
  openTreeHead,
  parseNote,
  verifierFor,
  type NoteVerifier,
} from '@/lib/sdk/audit/signed-note.ts';
import { readStateNote, writeStateNote } from './state-file.ts';

export interface WitnessConfig {
  name: string;
  privateKey: KeyObject;
  statePath: string;
  /** The log this witness follows: its origin and verifier key. */
  log: NoteVerifier;
  /** The ledger's base URL and a runtime key for its API. */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
}

export type WitnessResult =
  /** `submitted`: true once the ledger stored the cosignature, else why it did not. */
  | { kind: 'cosigned'; note: string; size: number; submitted: true | string }
  | { kind: 'unchanged'; size: number }
  | { kind: 'refused'; problem: string };

async function getJson<T>(w: WitnessConfig, path: string): Promise<T> {
  const res = await (w.fetch ?? fetch)(`${w.baseUrl.replace(/\/$/, '')}/api/v1${path}`, {
    headers: { authorization: `Bearer ${w.token}` },
  });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function witnessOnce(w: WitnessConfig, now: () => number = Date.now): Promise<WitnessResult> {
  const self = verifierFor(w.name, w.privateKey);
  const { note } = await getJson<{ note: string }>(w, '/audit/tree/head');
  let head;
  try {
    head = openTreeHead(note, { log: w.log });
  } catch (error) {
    return { kind: 'refused', problem: `the head does not verify: ${(error as Error).message}` };
  }
  const stateNote = readStateNote(w.statePath);
  const last = stateNote === null ? null : openTreeHead(stateNote, { log: w.log, witnesses: [self], quorum: 1 });
  if (last) {
    if (head.size < last.size)
      return { kind: 'refused', problem: `the head has ${head.size} leaves, this witness cosigned ${last.size}` };
    if (head.size === last.size) {
      if (!head.root.equals(last.root))
        return { kind: 'refused', problem: `the head at ${head.size} leaves has another root than the one cosigned` };
      return { kind: 'unchanged', size: head.size };
    }
    const { proof } = await getJson<{ proof: string[] }>(w, `/audit/tree/consistency/${last.size}/${head.size}`);
    const hashes = proof.map((p) => Buffer.from(p, 'base64'));
    if (!verifyConsistency(last.size, head.size, last.root, head.root, hashes))
      return {
        kind: 'refused',
        problem: `the head of ${head.size} leaves does not extend the one cosigned (${last.size})`,
      };
  }
  const body = parseNote(note).body;
  const time = Math.max(Math.floor(now() / 1000), last ? Math.max(...last.witnesses.map((x) => x.time)) : 0);
  const own = formatNote({ body, signatures: [cosign(body, time, w.name, w.privateKey)] });
  // Only the log's line and ours: other witnesses' lines are theirs to vouch for.
  const logLine = formatNote({
    body,
    signatures: parseNote(note).signatures.filter((s) => s.name === w.log.name && s.keyId === w.log.keyId),
  });
  const cosigned = mergeNotes([logLine, own]);
  writeStateNote(w.statePath, cosigned);
  // Handed to the ledger to serve with the head; the state file already holds it, so a ledger that
  // does not take it (this witness's key not configured there) costs nothing but the message.
  const res = await (w.fetch ?? fetch)(`${w.baseUrl.replace(/\/$/, '')}/api/v1/audit/tree/cosignature`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ note: own }),
  }).catch((error: Error) => error);
  const submitted = res instanceof Error ? res.message : res.ok ? (true as const) : `${res.status} ${await res.text()}`;
  return { kind: 'cosigned', note: cosigned, size: head.size, submitted };
}
