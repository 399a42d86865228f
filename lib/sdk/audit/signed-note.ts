// Signed tree heads as C2SP signed notes (docs/AUDIT.md, "Signed tree heads and witnesses"): the
// tlog-checkpoint body (origin, tree size, base64 root), signature lines, verifier keys (vkeys) and the
// timestamped Ed25519 signature of tlog-cosignature (signature type 0x04). The ledger's signer and every
// witness sign with that one type: the signature carries the time it was made, so "size, root, time"
// are all signed, and one verification routine serves the log's line and the witnesses' lines.
// Node's `crypto` only, so the SDK package ships it. Hand-written for the same reason as ./merkle.ts:
// no maintained JavaScript package implements these formats.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** Signature type of timestamped Ed25519 (co)signatures (c2sp.org/signed-note, c2sp.org/tlog-cosignature). */
export const COSIGNATURE_TYPE = 0x04;
const EM_DASH = '\u2014';
/** Larger notes are refused before parsing; 100 signature lines are far more than any quorum needs. */
export const MAX_NOTE_BYTES = 64 * 1024;
const MAX_SIGNATURES = 100;

export interface NoteSignature {
  name: string;
  keyId: number;
  /** The bytes after the key id. */
  signature: Buffer;
}

export interface Note {
  /** The signed text, final newline included. */
  body: string;
  signatures: NoteSignature[];
}

export class NoteError extends Error {}

const validName = (name: string) => name.length > 0 && !/[\s+]/u.test(name);

/** No control character but newline, no lone surrogate, no U+FFFD (what invalid UTF-8 decodes to). */
function plainText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x0a) || c === 0xfffd) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/** Parses a signed note; throws NoteError naming what is malformed. */
export function parseNote(text: string): Note {
  if (Buffer.byteLength(text) > MAX_NOTE_BYTES) throw new NoteError(`the note is over ${MAX_NOTE_BYTES} bytes`);
  if (!plainText(text)) throw new NoteError('the note holds a control character or text that is not valid UTF-8');
  const split = text.lastIndexOf('\n\n');
  if (split < 0 || !text.endsWith('\n')) throw new NoteError('the note has no blank line before its signatures');
  const body = text.slice(0, split + 1);
  const lines = text.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new NoteError(`the note has over ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line, i) => {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u.exec(line);
    const [name, encoded] = [m?.[1] ?? '', m?.[2] ?? ''];
    if (!m || !validName(name)) throw new NoteError(`signature line ${i + 1} is malformed`);
    const bytes = Buffer.from(encoded, 'base64');
    if (bytes.length < 5 || bytes.toString('base64') !== encoded)
      throw new NoteError(`signature line ${i + 1} is not base64 of a key id and a signature`);
    return { name, keyId: bytes.readUInt32BE(0), signature: bytes.subarray(4) };
  });
  return { body, signatures };
}

export function formatNote(note: Note): string {
  const lines = note.signatures.map((s) => {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(s.keyId);
    return `${EM_DASH} ${s.name} ${Buffer.concat([id, s.signature]).toString('base64')}\n`;
  });
  return `${note.body}\n${lines.join('')}`;
}

/** A tree head: the body of a tlog-checkpoint note. */
export interface TreeHead {
  origin: string;
  size: number;
  root: Buffer;
}

export function checkpointBody(head: TreeHead): string {
  if (!head.origin || head.origin.includes('\n')) throw new NoteError('the origin must be one non-empty line');
  return `${head.origin}\n${head.size}\n${head.root.toString('base64')}\n`;
}

/** The tree head a checkpoint body states; extension lines are refused (we never write any). */
export function parseCheckpointBody(body: string): TreeHead {
  const lines = body.split('\n');
  if (lines.length !== 4 || lines[3] !== '')
    throw new NoteError('a checkpoint body is three lines: origin, size, root');
  const [origin = '', sizeText = '', rootText = ''] = lines;
  if (!origin) throw new NoteError('the checkpoint has no origin');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    throw new NoteError('the checkpoint size is not a decimal number without leading zeros');
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== 32 || root.toString('base64') !== rootText)
    throw new NoteError('the checkpoint root is not base64 of 32 bytes');
  return { origin, size: Number(sizeText), root };
}

const publicOf = (key: KeyObject) => (key.type === 'public' ? key : createPublicKey(key));

/** The raw 32-byte Ed25519 public key. */
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = publicOf(key).export({ format: 'jwk' }) as { crv?: string; x?: string };
  if (jwk.crv !== 'Ed25519' || !jwk.x) throw new NoteError('the key is not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

/** SHA-256(name || "\n" || type || public key)[:4], big-endian. */
export function noteKeyId(name: string, type: number, raw: Buffer): number {
  return createHash('sha256').update(name).update('\n').update(Buffer.of(type)).update(raw).digest().readUInt32BE(0);
}

/** Who may sign: a name and an Ed25519 public key, for timestamped signatures (type 0x04). */
export interface NoteVerifier {
  name: string;
  keyId: number;
  publicKey: KeyObject;
}

export function verifierFor(name: string, key: KeyObject): NoteVerifier {
  if (!validName(name)) throw new NoteError(`"${name}" is not a key name (no spaces, no "+")`);
  return { name, keyId: noteKeyId(name, COSIGNATURE_TYPE, rawPublicKey(key)), publicKey: publicOf(key) };
}

/** The verifier key text: name+hex(key id)+base64(type || public key). */
export function formatVkey(v: NoteVerifier): string {
  const raw = rawPublicKey(v.publicKey);
  return `${v.name}+${v.keyId.toString(16).padStart(8, '0')}+${Buffer.concat([Buffer.of(COSIGNATURE_TYPE), raw]).toString('base64')}`;
}

export function parseVkey(text: string): NoteVerifier {
  const m = /^([^\s+]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+={0,2})$/.exec(text.trim());
  if (!m) throw new NoteError('a verifier key is name+hex key id+base64 key');
  const [, name = '', id = '', encoded = ''] = m;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length !== 33 || bytes[0] !== COSIGNATURE_TYPE)
    throw new NoteError('the verifier key is not a timestamped Ed25519 key (type 0x04, 32 bytes)');
  const publicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: bytes.subarray(1).toString('base64url') },
    format: 'jwk',
  });
  const v = verifierFor(name, publicKey);
  if (v.keyId !== parseInt(id, 16)) throw new NoteError('the verifier key id does not match its name and key');
  return v;
}

/** The message a timestamped signature covers: "cosignature/v1", the time line, the note body. */
function cosignedMessage(body: string, time: number): Buffer {
  return Buffer.from(`cosignature/v1\ntime ${time}\n${body}`);
}

/** Signs a checkpoint body at `time` (POSIX seconds): the signature line's bytes after the key id. */
export function cosign(body: string, time: number, name: string, privateKey: KeyObject): NoteSignature {
  if (!Number.isSafeInteger(time) || time < 0) throw new NoteError('the time must be POSIX seconds');
  const v = verifierFor(name, privateKey);
  const stamp = Buffer.alloc(8);
  stamp.writeBigUInt64BE(BigInt(time));
  const signature = sign(null, cosignedMessage(body, time), privateKey);
  return { name, keyId: v.keyId, signature: Buffer.concat([stamp, signature]) };
}

/** The time a signature from a known key states, or null when it does not verify. */
export function verifySignature(body: string, s: NoteSignature, v: NoteVerifier): number | null {
  if (s.name !== v.name || s.keyId !== v.keyId || s.signature.length !== 72) return null;
  const time = s.signature.readBigUInt64BE(0);
  if (time > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  const ok = verify(null, cosignedMessage(body, Number(time)), v.publicKey, s.signature.subarray(8));
  return ok ? Number(time) : null;
}

export interface OpenedHead extends TreeHead {
  body: string;
  /** The log's signing time (POSIX seconds). */
  time: number;
  /** Names of the witnesses whose cosignature verified, with their times. */
  witnesses: { name: string; time: number }[];
}

/**
 * Checks a signed tree head: the log's signature must verify, every line from a known key must verify
 * (one that does not rejects the whole note, as the signed-note specification advises), and at least
 * `quorum` of the given witnesses must have cosigned. Lines from unknown keys are ignored.
 */
export function openTreeHead(
  text: string,
  trust: { log: NoteVerifier; witnesses?: NoteVerifier[]; quorum?: number },
): OpenedHead {
  const note = parseNote(text);
  const head = parseCheckpointBody(note.body);
  if (head.origin !== trust.log.name) throw new NoteError(`the head's origin is ${head.origin}, not ${trust.log.name}`);
  let time: number | null = null;
  const witnesses = new Map<string, number>();
  for (const s of note.signatures) {
    const known = [trust.log, ...(trust.witnesses ?? [])].find((v) => v.name === s.name && v.keyId === s.keyId);
    if (!known) continue;
    const at = verifySignature(note.body, s, known);
    if (at === null) throw new NoteError(`the signature of ${s.name} does not verify`);
    if (known === trust.log) time = at;
    else witnesses.set(known.name, at);
  }
  if (time === null) throw new NoteError(`the head carries no signature of ${trust.log.name}`);
  const quorum = trust.quorum ?? 0;
  if (witnesses.size < quorum)
    throw new NoteError(`${witnesses.size} of the known witnesses cosigned this head, ${quorum} are required`);
  return { ...head, body: note.body, time, witnesses: [...witnesses].map(([name, at]) => ({ name, time: at })) };
}

/** One note with the signature lines of several notes of the same body (a head and its cosignatures). */
export function mergeNotes(texts: string[]): string {
  const notes = texts.map(parseNote);
  const body = notes[0]?.body;
  if (body === undefined || notes.some((n) => n.body !== body)) throw new NoteError('the notes sign different heads');
  const seen = new Set<string>();
  const signatures = notes
    .flatMap((n) => n.signatures)
    .filter((s) => {
      const k = `${s.name} ${s.keyId} ${s.signature.toString('base64')}`;
      return seen.has(k) ? false : (seen.add(k), true);
    });
  return formatNote({ body, signatures });
}
