// The tree signer as configured: AUDIT_SIGNING_KEY (the key that signs chain checkpoints too),
// AUDIT_TREE_ORIGIN, and the state file beside the key (AUDIT_TREE_STATE). Without a place for the
// state file nothing is signed: a signer that cannot remember what it signed cannot refuse to sign a
// rewritten history, which is the whole point of signing.
import { existsSync } from 'node:fs';
import { loadCheckpointKey } from '../checkpoint.ts';
import type { TreeSigner } from './signer.ts';
import { verifierFor, formatVkey } from '@/lib/sdk/audit/signed-note.ts';
import { createPublicKey } from 'node:crypto';

export interface TreeSettings {
  AUDIT_SIGNING_KEY?: string;
  AUDIT_TREE_ORIGIN: string;
  AUDIT_TREE_STATE?: string;
}

export function treeSignerFrom(e: TreeSettings): TreeSigner | { missing: string } {
  if (!e.AUDIT_SIGNING_KEY) return { missing: 'AUDIT_SIGNING_KEY is not set' };
  const keyIsFile = !e.AUDIT_SIGNING_KEY.includes('-----BEGIN') && existsSync(e.AUDIT_SIGNING_KEY);
  const statePath = e.AUDIT_TREE_STATE ?? (keyIsFile ? `${e.AUDIT_SIGNING_KEY}.tree-state` : undefined);
  if (!statePath)
    return {
      missing: 'AUDIT_TREE_STATE is not set (the signing key is given as a PEM, so there is no file to put it beside)',
    };
  return { privateKey: loadCheckpointKey(e.AUDIT_SIGNING_KEY).privateKey, origin: e.AUDIT_TREE_ORIGIN, statePath };
}

/** The verifier key (vkey) auditors and witnesses pin to check this log's heads. */
export function logVkey(signer: Pick<TreeSigner, 'origin' | 'privateKey'>): string {
  return formatVkey(verifierFor(signer.origin, createPublicKey(signer.privateKey)));
}
