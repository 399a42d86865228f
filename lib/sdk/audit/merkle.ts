// The Merkle tree over the whole audit trail (docs/AUDIT.md, "One tree over the whole trail"): RFC 9162
// section 2.1 hashing, inclusion and consistency proofs, and their verification. Node's `crypto` only,
// so the SDK package ships it and an auditor checks proofs with no database and nothing of ours
// running. Written here rather than taken from a library: the few JavaScript Merkle packages hash
// differently (no 0x00/0x01 domain separation, or duplicated odd nodes), and the verification
// algorithms are twenty lines each, which an auditor should be able to read in one place.
import { hash } from 'node:crypto';

export type Hash = Buffer;

// One-shot hashing (crypto.hash) into scratch buffers: an audit export of a million entries hashes
// about three million times, and a Hash object per call (createHash) costs more than the hashing
// itself. The scratch buffers are safe to share: hashing is synchronous and they are never returned.
const sha256 = (data: Uint8Array): Hash => hash('sha256', data, 'buffer') as unknown as Hash;
const leafInput = Buffer.alloc(33);
const nodeInput = Buffer.alloc(65, 1);

/** RFC 9162 leaf hash: SHA-256(0x00 || leaf bytes). */
export function merkleLeafHash(data: Uint8Array): Hash {
  if (data.length !== 32) return sha256(Buffer.concat([Buffer.of(0), data]));
  leafInput.set(data, 1);
  return sha256(leafInput);
}

/** RFC 9162 interior node: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  if (left.length !== 32 || right.length !== 32) return sha256(Buffer.concat([Buffer.of(1), left, right]));
  nodeInput.set(left, 1);
  nodeInput.set(right, 33);
  return sha256(nodeInput);
}

/** The hash of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Hash = sha256(Buffer.alloc(0));

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The leaf of an audit entry: its bytes are the 32 bytes of the entry's `hash` (hex in the export).
 * That hash is SHA-256 over the previous hash and the entry's canonical text, so it already commits to
 * every field, the chain and the position in it; hashing the canonical text again would put the
 * expensive canonicalization on the sequencer and add no binding.
 */
export function auditLeafHash(entryHashHex: string): Hash {
  if (!HEX64.test(entryHashHex)) throw new Error('an entry hash is 64 lower-case hex digits');
  return auditLeafHashUnchecked(entryHashHex);
}

/** auditLeafHash of a hash already known to be 64 lower-case hex digits (the verifier checked the
 *  entry's shape): the hex is written straight after the 0x00 prefix, with no buffer in between. */
export function auditLeafHashUnchecked(entryHashHex: string): Hash {
  leafInput.write(entryHashHex, 1, 32, 'hex');
  return sha256(leafInput);
}

/** The largest power of two strictly below n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The hash of a complete subtree: level `level` (0: a leaf hash), `index` counted at that level, so it
 * covers leaves [index * 2^level, (index + 1) * 2^level). The database stores exactly these.
 */
export type PerfectSubtree = (level: number, index: number) => Hash;

/**
 * MTH of leaves [start, end), where start is a multiple of the smallest power of two >= end - start
 * (true of every range RFC 9162's proofs name): the fold of its complete subtrees, largest first.
 */
export function rangeHash(start: number, end: number, perfect: PerfectSubtree): Hash {
  if (end <= start) throw new Error(`empty range [${start}, ${end})`);
  const parts: Hash[] = [];
  let at = start;
  for (let level = Math.floor(Math.log2(end - start)); level >= 0; level--) {
    const width = 2 ** level;
    if (at + width <= end) {
      parts.push(perfect(level, at / width));
      at += width;
    }
  }
  let hash: Hash = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i--) hash = nodeHash(parts[i]!, hash);
  return hash;
}

/** The root of a tree of `size` leaves (EMPTY_ROOT for 0). */
export function treeRoot(size: number, perfect: PerfectSubtree): Hash {
  return size === 0 ? EMPTY_ROOT : rangeHash(0, size, perfect);
}

/** RFC 9162 2.1.3.1: the audit path of leaf `index` in the tree of its first `size` leaves. */
export function inclusionProof(index: number, size: number, perfect: PerfectSubtree): Hash[] {
  if (!(index >= 0 && index < size)) throw new Error(`leaf ${index} is not in a tree of ${size}`);
  const path: Hash[] = [];
  const walk = (m: number, start: number, n: number) => {
    if (n === 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, start, k);
      path.push(rangeHash(start + k, start + n, perfect));
    } else {
      walk(m - k, start + k, n - k);
      path.push(rangeHash(start, start + k, perfect));
    }
  };
  walk(index, 0, size);
  return path;
}

/** RFC 9162 2.1.4.1: the proof that the tree of `first` leaves is a prefix of the tree of `second`. */
export function consistencyProof(first: number, second: number, perfect: PerfectSubtree): Hash[] {
  if (!(first >= 0 && first <= second)) throw new Error(`no consistency proof from ${first} to ${second}`);
  if (first === 0 || first === second) return [];
  const proof: Hash[] = [];
  const sub = (m: number, start: number, n: number, whole: boolean) => {
    if (m === n) {
      if (!whole) proof.push(rangeHash(start, start + n, perfect));
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, start, k, whole);
      proof.push(rangeHash(start + k, start + n, perfect));
    } else {
      sub(m - k, start + k, n - k, false);
      proof.push(rangeHash(start, start + k, perfect));
    }
  };
  sub(first, 0, second, true);
  return proof;
}

const isOdd = (n: bigint) => (n & 1n) === 1n;

/** RFC 9162 2.1.3.2: the root an inclusion proof leads to, or null when the proof has the wrong shape. */
export function rootFromInclusion(index: number, size: number, leaf: Uint8Array, proof: Uint8Array[]): Hash | null {
  if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) return null;
  let fn = BigInt(index);
  let sn = BigInt(size - 1);
  let r: Hash = Buffer.from(leaf);
  for (const p of proof) {
    if (p.length !== 32 || sn === 0n) return null;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!isOdd(fn)) while (!isOdd(fn) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else r = nodeHash(r, p);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return sn === 0n ? r : null;
}

export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: Uint8Array[],
  root: Uint8Array,
): boolean {
  const r = rootFromInclusion(index, size, leaf, proof);
  return r !== null && r.equals(root);
}

/**
 * RFC 9162 2.1.4.2: whether `proof` shows the tree of `first` leaves with root `firstRoot` is a prefix
 * of the tree of `second` leaves with root `secondRoot`. From the empty tree everything is consistent.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: Uint8Array[],
): boolean {
  if (!(Number.isSafeInteger(first) && Number.isSafeInteger(second) && first >= 0 && first <= second)) return false;
  if (proof.some((p) => p.length !== 32)) return false;
  if (first === 0) return proof.length === 0;
  if (first === second) return proof.length === 0 && Buffer.from(firstRoot).equals(secondRoot);
  if (proof.length === 0) return false;
  const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : proof;
  let fn = BigInt(first - 1);
  let sn = BigInt(second - 1);
  while (isOdd(fn)) [fn, sn] = [fn >> 1n, sn >> 1n];
  let fr: Hash = Buffer.from(path[0]!);
  let sr: Hash = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0n) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!isOdd(fn)) while (!isOdd(fn) && fn !== 0n) [fn, sn] = [fn >> 1n, sn >> 1n];
    } else sr = nodeHash(sr, c);
    [fn, sn] = [fn >> 1n, sn >> 1n];
  }
  return sn === 0n && fr.equals(firstRoot) && sr.equals(secondRoot);
}

/**
 * The root of leaves added one at a time, in O(log n) memory: the complete subtrees along the right
 * edge. An auditor holding a whole export computes the head's root with it, without keeping the leaves.
 */
export class TreeBuilder {
  // The right edge as two parallel stacks (levels strictly decreasing), no object per leaf.
  private readonly levels: number[] = [];
  private readonly hashes: Hash[] = [];
  size = 0;

  add(leaf: Hash): void {
    const { levels, hashes } = this;
    let level = 0;
    let node = leaf;
    while (levels.length && levels[levels.length - 1] === level) {
      levels.pop();
      node = nodeHash(hashes.pop()!, node);
      level++;
    }
    levels.push(level);
    hashes.push(node);
    this.size++;
  }

  root(): Hash {
    const { hashes } = this;
    if (hashes.length === 0) return EMPTY_ROOT;
    let node: Hash = hashes[hashes.length - 1]!;
    for (let i = hashes.length - 2; i >= 0; i--) node = nodeHash(hashes[i]!, node);
    return node;
  }
}
