/**
 * Storage of the audit log's Merkle tree: the hashes of COMPLETE perfect subtrees only.
 *
 * Node (level, index) covers leaves [index·2^level, (index+1)·2^level); level 0 holds the leaf
 * hashes. A node is written once, when its last leaf arrives, and never changes, so the table is
 * append-only. Incomplete right edges are never stored: they are recomputed from complete nodes
 * (at most log2(n) of them), which keeps appends cheap and lets any past tree size be proven.
 *
 * SQL sketch for the Postgres implementation (packages/db):
 *   CREATE TABLE audit_tree_nodes (level smallint, idx bigint, hash bytea NOT NULL,
 *                                  PRIMARY KEY (level, idx));
 *   size():     SELECT coalesce(max(idx) + 1, 0) FROM audit_tree_nodes WHERE level = 0
 *   getNodes(): SELECT level, idx, hash FROM audit_tree_nodes
 *               WHERE (level, idx) IN (SELECT * FROM unnest($levels::int[], $idxs::bigint[]))
 *               — then put the rows back in request order.
 *   putNodes(): INSERT … SELECT * FROM unnest(…) ON CONFLICT DO NOTHING   (one statement)
 */
import { HASH_BYTES, type Hash } from './merkle.ts';

export interface NodeId {
  level: number;
  index: number;
}

export interface TreeNode extends NodeId {
  hash: Hash;
}

export interface NodeStore {
  /** Number of leaves stored, i.e. of level-0 nodes. */
  size(): Promise<number>;
  /**
   * Hashes of the given nodes, in request order, `undefined` where a node is absent. Called with
   * O(log n) ids at a time, and expected to cost one round trip.
   */
  getNodes(ids: readonly NodeId[]): Promise<Array<Hash | undefined>>;
  /**
   * Stores newly completed nodes (leaves and inner nodes of every level) in one batch, atomically.
   * A node already present is left alone: nodes are immutable.
   */
  putNodes(nodes: readonly TreeNode[]): Promise<void>;
}

/** One level of the in-memory tree: `count` hashes packed back to back. */
interface PackedLevel {
  bytes: Uint8Array;
  count: number;
}

/**
 * NodeStore in memory, for tests, benchmarks and a single process. Each level is one contiguous
 * byte array (32 bytes a node), so a million-leaf tree takes about 64 MB and no per-node objects.
 */
export class MemoryNodeStore implements NodeStore {
  readonly #levels: PackedLevel[] = [];

  async size(): Promise<number> {
    return this.#levels[0]?.count ?? 0;
  }

  async getNodes(ids: readonly NodeId[]): Promise<Array<Hash | undefined>> {
    return ids.map(({ level, index }) => {
      const packed = this.#levels[level];
      if (!packed || !Number.isInteger(index) || index < 0 || index >= packed.count) return undefined;
      // A copy, so a caller that scribbles on it cannot corrupt the tree.
      return Buffer.from(packed.bytes.subarray(index * HASH_BYTES, (index + 1) * HASH_BYTES));
    });
  }

  async putNodes(nodes: readonly TreeNode[]): Promise<void> {
    // Check the whole batch first, so a bad batch changes nothing.
    const counts = new Map<number, number>();
    for (const { level, index, hash } of nodes) {
      const count = counts.get(level) ?? this.#levels[level]?.count ?? 0;
      if (index > count)
        throw new Error(`node (${level}, ${index}) would leave a gap: level ${level} has ${count}`);
      if (hash.byteLength !== HASH_BYTES) throw new Error(`node (${level}, ${index}) is not a 32-byte hash`);
      if (index === count) counts.set(level, count + 1);
    }
    for (const { level, index, hash } of nodes) {
      const packed = this.#level(level);
      if (index < packed.count) continue; // immutable: a node already stored stays as it is
      if ((packed.count + 1) * HASH_BYTES > packed.bytes.byteLength) {
        const grown = new Uint8Array(Math.max(1024, packed.bytes.byteLength * 2));
        grown.set(packed.bytes);
        packed.bytes = grown;
      }
      packed.bytes.set(hash, index * HASH_BYTES);
      packed.count += 1;
    }
  }

  #level(level: number): PackedLevel {
    while (this.#levels.length <= level) this.#levels.push({ bytes: new Uint8Array(0), count: 0 });
    return this.#levels[level]!;
  }
}
