// Signs the head (chain, seq, hash) of every audit chain that moved since its last checkpoint with the
// configured Ed25519 key and stores the signed checkpoints (docs/AUDIT.md). audit_checkpoint is
// append-only for everyone (a trigger, as for audit_entry), and the signing is audited in the same
// transaction. The private key comes from configuration only (AUDIT_SIGNING_KEY); it is never stored.
// A head below (or different from) what was already signed, by this key or any earlier one, is not
// signed: it is reported as a rewound chain, so the job never lends its signature to a rewritten
// history, not even right after a key rotation.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { Db } from '../db/client.ts';
import type { Actor } from '../ledger/actor.ts';
import { appendAudit } from './append.ts';
import { keyIdOf, signCheckpoint, type SignedCheckpoint } from '@/lib/sdk/audit/checkpoint-signature.ts';

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

export function publicKeyPem(key: CheckpointKey): string {
  return createPublicKey(key.privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

export interface CheckpointRound {
  signed: number;
  /** Chains whose head is at or below a seq already signed with another hash, or below one: rewound. */
  rewound: { chain: string; seq: number; signedSeq: number }[];
}

interface HeadRow {
  chain: string;
  seq: number;
  hash: string;
  /** The highest seq any key signed above this head, or at it with another hash: the chain rewound. */
  rewound_from: number | null;
}

export async function signChainHeads(db: Db, key: CheckpointKey): Promise<CheckpointRound> {
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CHECKPOINT_LOCK[0]}::int, ${CHECKPOINT_LOCK[1]}::int)`;
      // Heads this key has not signed as they are (new chains, moved chains, every head after a key
      // rotation), and heads below what any key signed. The rewind check looks at the checkpoints of
      // every key: after a rotation the new key must not sign a head below one the old key signed.
      const heads = await tx.$queryRaw<HeadRow[]>`
        SELECT h.chain, h.seq, h.hash, above.seq AS rewound_from
          FROM audit_chain_head h
          LEFT JOIN LATERAL (
            SELECT c.seq FROM audit_checkpoint c
             WHERE c.chain = h.chain AND (c.seq > h.seq OR (c.seq = h.seq AND c.hash <> h.hash))
             ORDER BY c.seq DESC LIMIT 1) above ON true
         WHERE above.seq IS NOT NULL
            OR NOT EXISTS (
              SELECT 1 FROM audit_checkpoint c
               WHERE c.chain = h.chain AND c.seq = h.seq AND c.key_id = ${key.keyId} AND c.hash = h.hash)
         ORDER BY h.chain`;
      const rewound = heads
        .filter((h) => h.rewound_from !== null)
        .map((h) => ({ chain: h.chain, seq: h.seq, signedSeq: h.rewound_from! }));
      const moved = heads.filter((h) => h.rewound_from === null);
      if (!moved.some((h) => h.chain !== CHECKPOINT_CHAIN)) return { signed: 0, rewound };
      const [{ now }] = await tx.$queryRawUnsafe<[{ now: string }]>(
        // Milliseconds (written with six digits): the stored timestamp must give back the signed text.
        `SELECT to_char(date_trunc('milliseconds', now()) AT TIME ZONE 'UTC', ${MICROS}) AS now`,
      );
      const rows: SignedCheckpoint[] = moved.map((h) => {
        const c = { chain: h.chain, seq: h.seq, hash: h.hash, signed_at: now, key_id: key.keyId };
        return { ...c, signature: signCheckpoint(c, key.privateKey) };
      });
      // One statement with arrays: a row-per-parameter insert of thousands of heads is much slower.
      await tx.$executeRaw`
        INSERT INTO audit_checkpoint (chain, seq, hash, signed_at, key_id, signature)
        SELECT chain, seq, hash, ${now}::timestamptz, ${key.keyId}, signature
          FROM unnest(${rows.map((c) => c.chain)}::text[], ${rows.map((c) => c.seq)}::int[],
                      ${rows.map((c) => c.hash)}::text[], ${rows.map((c) => c.signature)}::text[])
            AS r(chain, seq, hash, signature)`;
      await appendAudit(tx, {
        chain: CHECKPOINT_CHAIN,
        actor: SIGNER,
        action: 'audit.checkpoint',
        subjectType: 'audit',
        subjectId: 'checkpoint',
        detail: { key_id: key.keyId, signed: rows.length, rewound: rewound.map((r) => r.chain) },
      });
      return { signed: rows.length, rewound };
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
