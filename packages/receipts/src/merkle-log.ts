/**
 * The append-only audit log over a NodeStore: appends leaves, and produces roots, inclusion
 * proofs and consistency proofs for any tree size up to the current one (RFC 6962 §2.1).
 *
 * Each operation first works out which ranges of leaves it needs the hashes of (a pure function
 * of the sizes, mirroring the RFC's recursive definitions), maps each range onto at most log2(n)
 * complete stored nodes, fetches all of them in ONE getNodes call, and folds them. A proof on a
 * million-leaf log therefore costs one round trip of ~40 node lookups.
 *
 * Appends must not run concurrently against the same store: the caller serializes them (the SQL
 * side takes an advisory lock in the transaction that inserts the audit events and their nodes).
 * Reads may run at any time, for any tree size already appended.
 */
import {
  EMPTY_ROOT,
  HASH_BYTES,
  type Hash,
  type LeafData,
  largestPowerOfTwoBelow,
  leafHash,
  nodeHash,
  toHex,
} from './merkle.ts';
import type { NodeId, NodeStore, TreeNode } from './node-store.ts';
import { rangeProofRanges } from './range-proof.ts';

/** Leaves [start, end). */
type Range = readonly [start: number, end: number];

export interface AppendResult {
  /** Index of the first appended leaf (= the tree size before). */
  first_index: number;
  /** Tree size after the append. */
  tree_size: number;
}

export class MerkleLog {
  constructor(readonly store: NodeStore) {}

  /** Current number of leaves. */
  size(): Promise<number> {
    return this.store.size();
  }

  /** Appends raw leaf data (hashed with leafHash). */
  appendData(leaves: readonly LeafData[]): Promise<AppendResult> {
    return this.append(leaves.map(leafHash));
  }

  /**
   * Appends leaf hashes and stores every node they complete, in one putNodes batch. Needs at most
   * one old node per level (the left siblings on the old right edge), fetched in one getNodes call.
   */
  async append(leafHashes: readonly Hash[]): Promise<AppendResult> {
    const oldSize = await this.store.size();
    const newSize = oldSize + leafHashes.length;
    if (leafHashes.length === 0) return { first_index: oldSize, tree_size: oldSize };
    const leftSiblings = appendSiblings(oldSize, leafHashes.length);
    const fetched = await this.#fetch(leftSiblings);
    await this.store.putNodes(appendNodes(oldSize, leftSiblings, fetched, leafHashes));
    return { first_index: oldSize, tree_size: newSize };
  }

  /** MTH of the first `treeSize` leaves (default: all), as hex. */
  async root(treeSize?: number): Promise<string> {
    const n = await this.#checkedSize(treeSize);
    if (n === 0) return toHex(EMPTY_ROOT);
    const [root] = await this.#rangeHashes([[0, n]]);
    return toHex(root!);
  }

  /** RFC 6962 PATH(index, D[treeSize]): the audit path, bottom-up, as hex. */
  async inclusionProof(index: number, treeSize?: number): Promise<string[]> {
    const n = await this.#checkedSize(treeSize);
    if (!Number.isSafeInteger(index) || index < 0 || index >= n) {
      throw new RangeError(`leaf index ${index} is outside a tree of size ${n}`);
    }
    return (await this.#rangeHashes(inclusionRanges(index, n))).map(toHex);
  }

  /** RFC 6962 PROOF(oldSize, D[newSize]) as hex; empty when oldSize is 0 or equals newSize. */
  async consistencyProof(oldSize: number, newSize?: number): Promise<string[]> {
    const n = await this.#checkedSize(newSize);
    if (!Number.isSafeInteger(oldSize) || oldSize < 0 || oldSize > n) {
      throw new RangeError(`old size ${oldSize} is outside 0..${n}`);
    }
    if (oldSize === 0 || oldSize === n) return [];
    return (await this.#rangeHashes(consistencyRanges(oldSize, n))).map(toHex);
  }

  /** The range proof of leaves [start, end) in a tree of size treeSize (see range-proof.ts), as hex. */
  async rangeProof(start: number, end: number, treeSize?: number): Promise<string[]> {
    const n = await this.#checkedSize(treeSize);
    return (await this.#rangeHashes(rangeProofRanges(start, end, n))).map(toHex);
  }

  async #checkedSize(treeSize: number | undefined): Promise<number> {
    const stored = await this.store.size();
    if (treeSize === undefined) return stored;
    if (!Number.isSafeInteger(treeSize) || treeSize < 0 || treeSize > stored) {
      throw new RangeError(`tree size ${treeSize} is outside 0..${stored}`);
    }
    return treeSize;
  }

  /** MTH(D[start:end]) for each range, from one batched node lookup. */
  async #rangeHashes(ranges: readonly Range[]): Promise<Hash[]> {
    const perRange = ranges.map(([start, end]) => rangeNodes(start, end));
    const hashes = await this.#fetch(perRange.flat());
    let next = 0;
    return perRange.map((ids) => {
      const parts = hashes.slice(next, next + ids.length);
      next += ids.length;
      // The parts are perfect subtrees of decreasing size, left to right; MTH folds from the right.
      let hash = parts.at(-1)!;
      for (let i = parts.length - 2; i >= 0; i--) hash = nodeHash(parts[i]!, hash);
      return hash;
    });
  }

  async #fetch(ids: readonly NodeId[]): Promise<Hash[]> {
    if (ids.length === 0) return [];
    const hashes = await this.store.getNodes(ids);
    return ids.map((id, i) => {
      const hash = hashes[i];
      if (!hash) throw new Error(`audit tree node (${id.level}, ${id.index}) is missing from the store`);
      return hash;
    });
  }
}

/**
 * The stored nodes an append of `count` leaves to a tree of `oldSize` pairs with: at level l the
 * old tree has floor(oldSize / 2^l) complete nodes; where that count is odd and new nodes arrive
 * at that level, the first new parent pairs the old last node with a new one.
 */
export function appendSiblings(oldSize: number, count: number): NodeId[] {
  const newSize = oldSize + count;
  const ids: NodeId[] = [];
  for (let level = 0, width = 1; Math.floor(newSize / width) > Math.floor(oldSize / width); level++) {
    const complete = Math.floor(oldSize / width);
    if (complete % 2 === 1) ids.push({ level, index: complete - 1 });
    width *= 2;
  }
  return ids;
}

/**
 * Every node an append completes (the new leaves and the inner nodes above them), given the
 * hashes of the `siblings` from appendSiblings. Pure and synchronous: callers that read the
 * siblings themselves (in a batch with other statements) build the nodes without a store.
 */
export function appendNodes(
  oldSize: number,
  siblings: readonly NodeId[],
  siblingHashes: readonly Hash[],
  leafHashes: readonly Hash[],
): TreeNode[] {
  if (leafHashes.some((hash) => hash.byteLength !== HASH_BYTES)) {
    throw new TypeError('leaf hashes must be 32-byte SHA-256 digests (see leafHash)');
  }
  const oldLeft = new Map(siblings.map((id, i) => [id.level, siblingHashes[i]!]));
  const nodes: TreeNode[] = [];
  let level = 0;
  let first = oldSize;
  let hashes: readonly Hash[] = leafHashes;
  while (hashes.length > 0) {
    for (const [offset, hash] of hashes.entries()) nodes.push({ level, index: first + offset, hash });
    const parents: Hash[] = [];
    let i = 0;
    if (first % 2 === 1) {
      const left = oldLeft.get(level);
      if (!left) throw new Error(`audit tree node (${level}, ${first - 1}) is missing`);
      parents.push(nodeHash(left, hashes[0]!));
      i = 1;
    }
    for (; i + 1 < hashes.length; i += 2) parents.push(nodeHash(hashes[i]!, hashes[i + 1]!));
    hashes = parents;
    first = Math.floor(first / 2);
    level += 1;
  }
  return nodes;
}

/**
 * The ranges whose hashes make up PATH(m, D[n]), bottom-up. Walks the RFC recursion top-down
 * (m < k: recurse left, the right part is the sibling; else the reverse) and reverses, since
 * PATH appends each level's sibling after the deeper path.
 */
export function inclusionRanges(m: number, n: number): Range[] {
  const ranges: Range[] = [];
  let start = 0;
  let end = n;
  while (end - start > 1) {
    const split = start + largestPowerOfTwoBelow(end - start);
    if (m < split) {
      ranges.push([split, end]);
      end = split;
    } else {
      ranges.push([start, split]);
      start = split;
    }
  }
  return ranges.reverse();
}

/** The ranges whose hashes make up PROOF(m, D[n]) = SUBPROOF(m, D[n], true), for 0 < m < n. */
export function consistencyRanges(m: number, n: number): Range[] {
  const ranges: Range[] = [];
  let start = 0;
  let end = n;
  let rest = m; // m relative to `start`
  let wholeOldTree = true; // the RFC's b: true while the subtree is a prefix of the old tree
  for (;;) {
    if (rest === end - start) {
      // SUBPROOF(m, D[m], b): nothing if this is the old tree itself, else its hash.
      if (!wholeOldTree) ranges.push([start, end]);
      break;
    }
    const k = largestPowerOfTwoBelow(end - start);
    if (rest <= k) {
      ranges.push([start + k, end]);
      end = start + k;
    } else {
      ranges.push([start, start + k]);
      start += k;
      rest -= k;
      wholeOldTree = false;
    }
  }
  return ranges.reverse();
}

/**
 * The complete stored nodes that make up MTH(D[start:end]), left to right. Every range the RFC
 * recursion produces starts at a multiple of a power of two at least its length, so a greedy
 * walk taking the largest aligned node that fits yields exactly the RFC's left-heavy split.
 */
export function rangeNodes(start: number, end: number): NodeId[] {
  const ids: NodeId[] = [];
  let pos = start;
  while (pos < end) {
    let level = 0;
    let width = 1;
    while (pos % (width * 2) === 0 && pos + width * 2 <= end) {
      level += 1;
      width *= 2;
    }
    ids.push({ level, index: pos / width });
    pos += width;
  }
  return ids;
}
