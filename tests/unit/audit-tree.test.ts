// A2: the audit tree's RFC 9162 hashing and proofs (lib/sdk/audit/merkle.ts) and its C2SP signed notes
// (lib/sdk/audit/signed-note.ts), checked against the recursive definitions, on every size up to 40.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  consistencyProof,
  inclusionProof,
  merkleLeafHash,
  nodeHash,
  treeRoot,
  TreeBuilder,
  verifyConsistency,
  verifyInclusion,
  type Hash,
} from '@/lib/sdk/audit/merkle.ts';
import {
  checkpointBody,
  cosign,
  formatNote,
  formatVkey,
  mergeNotes,
  openTreeHead,
  parseVkey,
  verifierFor,
} from '@/lib/sdk/audit/signed-note.ts';

const leaves = (n: number) => Array.from({ length: n }, (_, i) => merkleLeafHash(Buffer.from(`entry ${i}`)));

/** MTH as RFC 9162 defines it, by recursion over the leaves. */
function mth(d: Hash[]): Hash {
  if (d.length === 0) return createHash('sha256').digest();
  if (d.length === 1) return d[0]!;
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  return nodeHash(mth(d.slice(0, k)), mth(d.slice(k)));
}

/** Complete subtrees of an in-memory tree, as the database stores them. */
const perfectOf = (d: Hash[]) => {
  const memo = new Map<string, Hash>();
  return (level: number, index: number) => {
    const width = 2 ** level;
    const slice = d.slice(index * width, (index + 1) * width);
    if (slice.length !== width) throw new Error(`no complete subtree at ${level}:${index}`);
    const key = `${level}:${index}`;
    if (!memo.has(key)) memo.set(key, mth(slice));
    return memo.get(key)!;
  };
};

const flip = (h: Hash) => {
  const c = Buffer.from(h);
  c[0] = c[0]! ^ 1;
  return c;
};

describe('A2: the audit tree (RFC 9162)', () => {
  it('roots, inclusion and consistency proofs match the recursive definition and verify; every altered proof fails', () => {
    for (let n = 1; n <= 40; n++) {
      const d = leaves(n);
      const perfect = perfectOf(d);
      const root = treeRoot(n, perfect);
      expect(root.equals(mth(d))).toBe(true);
      const builder = new TreeBuilder();
      d.forEach((l) => builder.add(l));
      expect(builder.root().equals(root)).toBe(true);
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(i, n, perfect);
        expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(n)));
        expect(verifyInclusion(i, n, d[i]!, proof, root), `leaf ${i} of ${n}`).toBe(true);
        expect(verifyInclusion(i, n, flip(d[i]!), proof, root)).toBe(false);
        if (proof.length) expect(verifyInclusion(i, n, d[i]!, [flip(proof[0]!), ...proof.slice(1)], root)).toBe(false);
        if (n > 1) expect(verifyInclusion((i + 1) % n, n, d[i]!, proof, root)).toBe(false);
      }
      for (let m = 0; m <= n; m++) {
        const proof = consistencyProof(m, n, perfect);
        const old = mth(d.slice(0, m));
        expect(verifyConsistency(m, n, old, root, proof), `${m} -> ${n}`).toBe(true);
        if (m > 0 && m < n) {
          expect(verifyConsistency(m, n, flip(old), root, proof)).toBe(false);
          expect(verifyConsistency(m, n, old, flip(root), proof)).toBe(false);
          expect(verifyConsistency(m, n, old, root, proof.slice(1))).toBe(false);
          // A different history of the same first m leaves is not consistent.
          const other = [...d];
          other[m - 1] = flip(other[m - 1]!);
          expect(verifyConsistency(m, n, old, mth(other), consistencyProof(m, n, perfectOf(other)))).toBe(false);
        }
      }
    }
  });

  it('refuses sizes and indexes outside the tree', () => {
    const d = leaves(5);
    expect(() => inclusionProof(5, 5, perfectOf(d))).toThrow();
    expect(() => consistencyProof(6, 5, perfectOf(d))).toThrow();
    expect(verifyInclusion(-1, 5, d[0]!, [], mth(d))).toBe(false);
    expect(verifyConsistency(3, 2, mth(d), mth(d), [])).toBe(false);
  });
});

describe('A2: signed tree heads (C2SP signed note, tlog-checkpoint, tlog-cosignature)', () => {
  const log = generateKeyPairSync('ed25519');
  const w1 = generateKeyPairSync('ed25519');
  const w2 = generateKeyPairSync('ed25519');
  const logV = verifierFor('example.test/audit', log.publicKey);
  const w1V = verifierFor('witness.test/one', w1.publicKey);
  const w2V = verifierFor('witness.test/two', w2.publicKey);
  const body = checkpointBody({ origin: 'example.test/audit', size: 7, root: mth(leaves(7)) });
  const signed = formatNote({ body, signatures: [cosign(body, 1_700_000_000, logV.name, log.privateKey)] });

  it('a head signed by the log opens with its size, root and time; vkeys round-trip', () => {
    expect(signed).toMatch(
      /^example\.test\/audit\n7\n[A-Za-z0-9+/]{43}=\n\n\u2014 example\.test\/audit [A-Za-z0-9+/=]+\n$/,
    );
    const head = openTreeHead(signed, { log: logV });
    expect(head).toMatchObject({ size: 7, time: 1_700_000_000, witnesses: [] });
    expect(head.root.equals(mth(leaves(7)))).toBe(true);
    expect(parseVkey(formatVkey(w1V)).keyId).toBe(w1V.keyId);
    expect(() => parseVkey(formatVkey(w1V).replace(/\+[0-9a-f]{8}\+/, '+00000000+'))).toThrow(/key id/);
  });

  it('a quorum of known witnesses is required; a changed body or signature is refused', () => {
    const c1 = formatNote({ body, signatures: [cosign(body, 1_700_000_100, w1V.name, w1.privateKey)] });
    const c2 = formatNote({ body, signatures: [cosign(body, 1_700_000_200, w2V.name, w2.privateKey)] });
    const all = mergeNotes([signed, c1, c2]);
    const trust = { log: logV, witnesses: [w1V, w2V] };
    expect(
      openTreeHead(all, { ...trust, quorum: 2 })
        .witnesses.map((w) => w.name)
        .sort(),
    ).toEqual([w1V.name, w2V.name]);
    expect(() => openTreeHead(mergeNotes([signed, c1]), { ...trust, quorum: 2 })).toThrow(/1 of the known witnesses/);
    expect(() => openTreeHead(all.replace('\n7\n', '\n8\n'), trust)).toThrow(/does not verify/);
    // A witness line from an unknown key is ignored, not counted.
    expect(() => openTreeHead(mergeNotes([signed, c2]), { log: logV, witnesses: [w1V], quorum: 1 })).toThrow(/0 of/);
    expect(() => openTreeHead(signed.replace('\u2014', '-'), trust)).toThrow(/malformed/);
    expect(() => openTreeHead(signed.replace('\n\n', '\n'), trust)).toThrow();
  });
});
