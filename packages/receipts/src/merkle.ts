/**
 * RFC 6962 (Certificate Transparency) Merkle tree hashing and proof verification.
 *
 * Everything here is pure: it works on hashes handed to it and never touches storage. Proof
 * *generation* against stored nodes lives in merkle-log.ts; the checks that take hex strings and
 * signed checkpoints live in checkpoint.ts.
 *
 * Tree sizes and indexes are plain numbers: exact up to 2^53, so the arithmetic below uses
 * `% 2` and `Math.floor(x / 2)` rather than 32-bit bit operators.
 */
import crypto from 'node:crypto';

/** A SHA-256 digest: 32 bytes. */
export type Hash = Uint8Array;

export const HASH_BYTES = 32;

/**
 * One-shot SHA-256. crypto.hash (Node ≥ 20.12) skips the Hash object that createHash allocates,
 * which roughly halves the cost of building a large tree (the cost is mostly that allocation and
 * its garbage, not SHA-256 itself).
 */
const sha256: (data: Uint8Array) => Buffer =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'buffer')
    : (data) => crypto.createHash('sha256').update(data).digest();

/** MTH({}) = SHA-256() — the root of the empty tree. */
export const EMPTY_ROOT: Hash = sha256(new Uint8Array(0));

/** Leaf data as bytes; strings are taken as UTF-8. */
export type LeafData = Uint8Array | string;

// Hashing is synchronous, so one scratch buffer can hold "prefix || input" for every call.
// Inputs larger than SCRATCH_LIMIT get a buffer of their own.
const SCRATCH_LIMIT = 64 * 1024;
let scratch = Buffer.alloc(1024);
const nodeInput = Buffer.alloc(1 + 2 * HASH_BYTES);
nodeInput[0] = 0x01;

/** SHA-256(0x00 || data). The 0x00/0x01 prefixes keep a leaf from passing for an inner node. */
export function leafHash(data: LeafData): Hash {
  const length = 1 + (typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength);
  let input = scratch;
  if (length > scratch.length) {
    input = Buffer.alloc(length);
    if (length <= SCRATCH_LIMIT) scratch = input;
  }
  input[0] = 0x00;
  if (typeof data === 'string') input.write(data, 1, 'utf8');
  else input.set(data, 1);
  return sha256(input.subarray(0, length));
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Hash, right: Hash): Hash {
  nodeInput.set(left, 1);
  nodeInput.set(right, 1 + HASH_BYTES);
  return sha256(nodeInput);
}

/** Lower-case hex, the one text form of hashes in this package (checkpoints, proofs, JSON). */
export function toHex(hash: Hash): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex');
}

const HEX_HASH = /^[0-9a-f]{64}$/;

/** Parses a 64-character lower-case hex hash; returns null for anything else. */
export function fromHex(hex: string): Hash | null {
  return typeof hex === 'string' && HEX_HASH.test(hex) ? Buffer.from(hex, 'hex') : null;
}

export function hashesEqual(a: Hash, b: Hash): boolean {
  return Buffer.compare(a, b) === 0;
}

/** k in RFC 6962 §2.1: the largest power of two strictly smaller than n (n ≥ 2). */
export function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && largestPowerOfTwoBelow(n + 1) === n;
}

const half = (n: number): number => Math.floor(n / 2);
const isOdd = (n: number): boolean => n % 2 === 1;

/**
 * RFC 9162 §2.1.3.2: the root implied by a leaf hash, its index and its audit path in a tree of
 * `treeSize` leaves, or null when the path has the wrong shape for that index and size.
 * Compare the result with a trusted root to verify inclusion.
 */
export function rootFromInclusionProof(
  leaf: Hash,
  index: number,
  treeSize: number,
  proof: readonly Hash[],
): Hash | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) {
    return null;
  }
  let fn = index;
  let sn = treeSize - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (isOdd(fn) || fn === sn) {
      r = nodeHash(p, r);
      // A right-edge node with no right sibling at this level: climb until it is a right child.
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : null;
}

/**
 * RFC 9162 §2.1.4.2: true when `proof` shows that the tree of `oldSize` leaves with root
 * `oldRoot` is a prefix of the tree of `newSize` leaves with root `newRoot`.
 *
 * Edge cases the RFC leaves to the caller: equal sizes need an empty proof and equal roots; the
 * empty tree is a prefix of every tree (empty proof).
 */
export function verifyConsistencyProof(
  oldSize: number,
  newSize: number,
  oldRoot: Hash,
  newRoot: Hash,
  proof: readonly Hash[],
): boolean {
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 0 || oldSize > newSize) {
    return false;
  }
  if (oldSize === newSize) return proof.length === 0 && hashesEqual(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0 && hashesEqual(oldRoot, EMPTY_ROOT);
  if (proof.length === 0) return false;

  // A power-of-two old tree is itself a node of the new tree, so the proof leaves it out.
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && hashesEqual(fr, oldRoot) && hashesEqual(sr, newRoot);
}

/**
 * Computes MTH over leaves fed one at a time, in O(log n) memory: a stack of the complete
 * subtrees on the right edge, merged whenever two of equal size meet. This is how the audit
 * check recomputes the root from every stored event without loading them all.
 */
export class StreamingRoot {
  /** Complete subtrees left to right; sizes are distinct, decreasing powers of two. */
  readonly #stack: Array<{ size: number; hash: Hash }> = [];
  #count = 0;

  /** Leaves added so far. */
  get size(): number {
    return this.#count;
  }

  addLeafData(data: LeafData): void {
    this.addLeafHash(leafHash(data));
  }

  addLeafHash(hash: Hash): void {
    let node = { size: 1, hash };
    for (let top = this.#stack.at(-1); top && top.size === node.size; top = this.#stack.at(-1)) {
      this.#stack.pop();
      node = { size: top.size * 2, hash: nodeHash(top.hash, node.hash) };
    }
    this.#stack.push(node);
    this.#count += 1;
  }

  /** MTH of the leaves so far; adding more leaves afterwards is fine. */
  root(): Hash {
    const last = this.#stack.at(-1);
    if (!last) return EMPTY_ROOT;
    let hash = last.hash;
    for (let i = this.#stack.length - 2; i >= 0; i--) hash = nodeHash(this.#stack[i]!.hash, hash);
    return hash;
  }
}

/** Batches of leaf data, e.g. rows from a database cursor mapped to their leaf bytes. */
export type LeafBatches = AsyncIterable<Iterable<LeafData>> | Iterable<Iterable<LeafData>>;

/**
 * Recomputes the root from raw leaf data, streaming batch by batch. With `treeSize`, stops after
 * that many leaves (the rest of the source is not read), so a log that has grown since a
 * checkpoint can still be checked against it; `tree_size` below `treeSize` means leaves are missing.
 */
export async function recomputeRoot(
  batches: LeafBatches,
  options: { treeSize?: number } = {},
): Promise<{ tree_size: number; root_hash: string }> {
  const limit = options.treeSize ?? Number.POSITIVE_INFINITY;
  const tree = new StreamingRoot();
  outer: for await (const batch of batches) {
    for (const data of batch) {
      if (tree.size >= limit) break outer;
      tree.addLeafData(data);
    }
    if (tree.size >= limit) break;
  }
  return { tree_size: tree.size, root_hash: toHex(tree.root()) };
}
