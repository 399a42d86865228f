// Signs the head (chain, seq, hash) of every audit chain that moved since its last checkpoint with the
// configured Ed25519 key and stores the signed checkpoints (docs/AUDIT.md). audit_checkpoint is
// append-only for everyone (a trigger, as for audit_entry), and the signing is audited in the same
// transaction. The private key comes from configuration only (AUDIT_SIGNING_KEY); it is never stored.
// A head below (or different from) what was already signed, by this key or any earlier one, is not
// signed: it is reported as a rewound chain, so the job never lends its signature to a rewritten
// history, not even right after a key rotation. A stored checkpoint counts only once its signature
// verifies with a trusted public key: the round is not steered by rows it did not sign.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Db } from '../db/client.ts';
import type { Actor } from '../core/actor.ts';
import { appendAudit } from './append.ts';
import {
  checkpointSignatureValid,
  checkpointText,
  keyIdOf,
  publicKeysById,
  signCheckpoint,
  type PublicKeys,
  type SignedCheckpoint,
} from '@/lib/sdk/audit/checkpoint-signature.ts';

/** The chain the signing itself is audited on; its own new entry alone does not call for a new round. */
export const CHECKPOINT_CHAIN = 'audit:checkpoint';
const SIGNER: Actor = { kind: 'system', id: 'audit-checkpoint', label: 'signed checkpoints' };
/** Serializes concurrent signers (the CLI and the worker leader): advisory lock (class, key). */
const CHECKPOINT_LOCK = [20585, 1] as const;
const MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

export interface CheckpointKey {
  privateKey: KeyObject;
  keyId: string;
}

/** AUDIT_SIGNING_KEY holds a PKCS8 PEM, or the path of a file holding one. */
export function loadCheckpointKey(setting: string): CheckpointKey {
  const pem = setting.includes('-----BEGIN') ? setting : existsSync(setting) ? readFileSync(setting, 'utf8') : null;
  if (!pem) throw new Error('AUDIT_SIGNING_KEY is neither a PEM nor the path of a readable file');
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('AUDIT_SIGNING_KEY must be an Ed25519 key');
  return { privateKey, keyId: keyIdOf(privateKey) };
}

/** AUDIT_PREVIOUS_PUBLIC_KEYS: comma-separated paths of PEM public keys, by key id. */
export function loadTrustedKeys(setting: string | undefined): PublicKeys {
  const paths = (setting ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return publicKeysById(paths.map((p) => readFileSync(p, 'utf8')));
}

export function publicKeyPem(key: CheckpointKey): string {
  return createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

export interface CheckpointRound {
  signed: number;
  /** Chains whose head is at or below a seq already signed with another hash, or below one: rewound. */
  rewound: { chain: string; seq: number; signedSeq: number }[];
  /** Stored checkpoints whose signature does not verify with a trusted public key (planted, or signed
   *  by a key whose public key is not configured): not trusted, reported every round. */
  untrusted: { chain: string; seq: number; keyId: string }[];
}

/** A stored checkpoint a round's decision would rest on. */
type StoredCheckpoint = Omit<SignedCheckpoint, 'chain'>;

interface HeadRow {
  chain: string;
  seq: number;
  hash: string;
  /** Checkpoints above this head, or at it with another hash (the chain rewound, if any verifies),
   *  and this key's checkpoint of the head as it is (nothing to sign, if it verifies). */
  stored: StoredCheckpoint[];
}

/** Signatures already verified, by their signed text and signature: a stored checkpoint that did not
 *  change is not verified again every round. */
const verified = new Set<string>();

function trusted(c: SignedCheckpoint, keys: PublicKeys): boolean {
  const key = keys.get(c.key_id);
  if (!key) return false;
  const id = `${checkpointText(c)} ${c.signature}`;
  if (verified.has(id)) return true;
  if (!checkpointSignatureValid(c, key)) return false;
  verified.add(id);
  return true;
}

/**
 * `trustedKeys`: public keys of earlier signing keys (rotation), whose checkpoints still bind the
 * round; the current key's own public key is always trusted. A stored checkpoint is believed only
 * when its signature verifies with one of them.
 */
export async function signChainHeads(
  db: Db,
  key: CheckpointKey,
  trustedKeys: PublicKeys = new Map(),
): Promise<CheckpointRound> {
  const keys: PublicKeys = new Map([...trustedKeys, [key.keyId, createPublicKey(key.privateKey)]]);
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CHECKPOINT_LOCK[0]}::int, ${CHECKPOINT_LOCK[1]}::int)`;
      // Per head, the stored checkpoints the decision rests on: those above it or at it with another
      // hash (by any key: after a rotation the new key must not sign below what the old key signed),
      // and this key's checkpoint of the head as it is. Each is trusted only once its signature
      // verifies (below): a row planted in audit_checkpoint neither stops the round nor calls a
      // chain rewound.
      const rows = await tx.$queryRaw<HeadRow[]>`
        SELECT h.chain, h.seq, h.hash, coalesce(s.stored, '[]'::jsonb) AS stored
          FROM audit_chain_head h
          LEFT JOIN LATERAL (
            SELECT jsonb_agg(jsonb_build_object('seq', c.seq, 'hash', c.hash, 'key_id', c.key_id, 'signature', c.signature,
                     'signed_at', to_char(c.signed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))) AS stored
              FROM audit_checkpoint c
             WHERE c.chain = h.chain
               AND (c.seq > h.seq OR (c.seq = h.seq AND (c.hash <> h.hash OR c.key_id = ${key.keyId})))) s ON true
         ORDER BY h.chain`;
      const rewound: CheckpointRound['rewound'] = [];
      const untrusted: CheckpointRound['untrusted'] = [];
      const moved: HeadRow[] = [];
      for (const h of rows) {
        let signedAbove = 0;
        let signedAsIs = false;
        for (const c of h.stored) {
          if (!trusted({ ...c, chain: h.chain }, keys)) {
            untrusted.push({ chain: h.chain, seq: c.seq, keyId: c.key_id });
            continue;
          }
          if (c.seq === h.seq && c.hash === h.hash) signedAsIs = true;
          else signedAbove = Math.max(signedAbove, c.seq);
        }
        if (signedAbove) rewound.push({ chain: h.chain, seq: h.seq, signedSeq: signedAbove });
        else if (!signedAsIs) moved.push(h);
      }
      if (!moved.some((h) => h.chain !== CHECKPOINT_CHAIN)) return { signed: 0, rewound, untrusted };
      const [{ now }] = await tx.$queryRawUnsafe<[{ now: string }]>(
        // Milliseconds (written with six digits): the stored timestamp must give back the signed text.
        `SELECT to_char(date_trunc('milliseconds', now()) AT TIME ZONE 'UTC', ${MICROS}) AS now`,
      );
      const signed: SignedCheckpoint[] = moved.map((h) => {
        const c = { chain: h.chain, seq: h.seq, hash: h.hash, signed_at: now, key_id: key.keyId };
        return { ...c, signature: signCheckpoint(c, key.privateKey) };
      });
      // One statement with arrays: a row-per-parameter insert of thousands of heads is much slower.
      // A planted row may hold the (chain, seq, key id) this round signs: it stays (append-only), is
      // reported above as untrusted, and does not make the whole round fail.
      const inserted = await tx.$executeRaw`
        INSERT INTO audit_checkpoint (chain, seq, hash, signed_at, key_id, signature)
        SELECT chain, seq, hash, ${now}::timestamptz, ${key.keyId}, signature
          FROM unnest(${signed.map((c) => c.chain)}::text[], ${signed.map((c) => c.seq)}::int[],
                      ${signed.map((c) => c.hash)}::text[], ${signed.map((c) => c.signature)}::text[])
            AS r(chain, seq, hash, signature)
        ON CONFLICT (chain, seq, key_id) DO NOTHING`;
      await appendAudit(tx, {
        chain: CHECKPOINT_CHAIN,
        actor: SIGNER,
        action: 'audit.checkpoint',
        subjectType: 'audit',
        subjectId: 'checkpoint',
        detail: {
          key_id: key.keyId,
          signed: inserted,
          rewound: rewound.map((r) => r.chain),
          ...(untrusted.length && { untrusted: untrusted.map((u) => `${u.chain}@${u.seq}`) }),
        },
      });
      return { signed: inserted, rewound, untrusted };
    },
    { timeout: 120_000, maxWait: 30_000 },
  );
}

/** Every stored checkpoint, oldest first, as the checkpoints file carries them. */
export async function listCheckpoints(db: Db): Promise<SignedCheckpoint[]> {
  return db.$queryRawUnsafe<SignedCheckpoint[]>(
    `SELECT chain, seq, hash, to_char(signed_at AT TIME ZONE 'UTC', ${MICROS}) AS signed_at, key_id, signature
       FROM audit_checkpoint ORDER BY id`,
  );
}
