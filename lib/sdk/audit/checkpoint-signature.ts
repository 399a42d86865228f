// What a signed checkpoint is, outside the database: the text that is signed, the key id, signing and
// checking. Imports only Node built-ins and its sibling, so the offline verifier (and the SDK package)
// can use it with no database. docs/AUDIT.md describes the format for reimplementing it elsewhere.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { jcs } from './canonical.ts';

/** One signed checkpoint as stored and as exported (names as in the JSON Lines export). */
export interface SignedCheckpoint {
  chain: string;
  seq: number;
  hash: string;
  /** Database time of the signing, UTC to the microsecond: YYYY-MM-DDTHH:MM:SS.ffffffZ. */
  signed_at: string;
  key_id: string;
  /** base64 of the 64-byte Ed25519 signature of checkpointText(). */
  signature: string;
}

/** The checkpoints file exported alongside a trail export (`npm run audit:checkpoint -- --export`). */
export interface CheckpointsFile {
  format: 'effect-ledger-checkpoints';
  version: 1;
  checkpoints: SignedCheckpoint[];
}

/** The signed bytes: RFC 8785 text of the checkpoint's fields (without the signature), tagged with a
 *  format name so a signature over a checkpoint can never pass for a signature over anything else. */
export function checkpointText(c: Omit<SignedCheckpoint, 'signature'>): string {
  return jcs({
    format: 'effect-ledger-checkpoint',
    version: 1,
    chain: c.chain,
    seq: c.seq,
    hash: c.hash,
    signed_at: c.signed_at,
    key_id: c.key_id,
  });
}

/** A key's id: the first 16 hex digits of sha256 of its public key (SPKI, DER). Rotation adds a key
 *  with another id; checkpoints keep naming the key that signed them. */
export function keyIdOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

export function signCheckpoint(c: Omit<SignedCheckpoint, 'signature'>, privateKey: KeyObject): string {
  return sign(null, Buffer.from(checkpointText(c), 'utf8'), privateKey).toString('base64');
}

export function checkpointSignatureValid(c: SignedCheckpoint, publicKey: KeyObject): boolean {
  try {
    return verify(null, Buffer.from(checkpointText(c), 'utf8'), publicKey, Buffer.from(c.signature, 'base64'));
  } catch {
    return false;
  }
}

/** Public keys by key id. */
export type PublicKeys = Map<string, KeyObject>;

/** Parses public keys (PEM, several allowed, one per rotation) into a map by key id. */
export function publicKeysById(pems: string[]): PublicKeys {
  const keys = new Map<string, KeyObject>();
  for (const pem of pems) {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('a checkpoint public key must be Ed25519');
    keys.set(keyIdOf(key), key);
  }
  return keys;
}
