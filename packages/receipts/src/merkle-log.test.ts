import { describe, expect, it } from 'vitest';
import { EMPTY_ROOT, leafHash, nodeHash, recomputeRoot, toHex } from './merkle.ts';
import { MerkleLog, rangeNodes } from './merkle-log.ts';
import { MemoryNodeStore, type NodeId, type NodeStore, type TreeNode } from './node-store.ts';

/** Wraps a store to record what the log asks of it. */
class CountingStore implements NodeStore {
  readonly getBatches: NodeId[][] = [];
  readonly putBatches: TreeNode[][] = [];
  constructor(private readonly inner: NodeStore) {}
  size() {
    return this.inner.size();
  }
  getNodes(ids: readonly NodeId[]) {
    this.getBatches.push([...ids]);
    return this.inner.getNodes(ids);
  }
  putNodes(nodes: readonly TreeNode[]) {
    this.putBatches.push([...nodes]);
    return this.inner.putNodes(nodes);
  }
}

const leaves = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `leaf ${from + i}`);

describe('MerkleLog', () => {
  it('stores only complete nodes, and exactly the ones an append completes', async () => {
    const store = new CountingStore(new MemoryNodeStore());
    const log = new MerkleLog(store);
    await log.appendData(leaves(0, 5)); // leaves 0..4: (1,0) (1,1) (2,0) complete; leaf 4 alone
    expect(store.putBatches[0]!.map(({ level, index }) => `${level}:${index}`)).toEqual([
      '0:0',
      '0:1',
      '0:2',
      '0:3',
      '0:4',
      '1:0',
      '1:1',
      '2:0',
    ]);
    expect(store.getBatches).toEqual([]); // nothing old was needed

    await log.appendData(leaves(5, 8)); // completes (1,2) (1,3) (2,1) (3,0); needs old leaf 4 and node (2,0)
    expect(store.getBatches).toEqual([
      [
        { level: 0, index: 4 },
        { level: 2, index: 0 },
      ],
    ]);
    expect(store.putBatches[1]!.map(({ level, index }) => `${level}:${index}`)).toEqual([
      '0:5',
      '0:6',
      '0:7',
      '1:2',
      '1:3',
      '2:1',
      '3:0',
    ]);
    const [top] = await store.getNodes([{ level: 3, index: 0 }]);
    expect(toHex(top!)).toBe(await log.root(8));
  });

  it('answers a proof on a large log with one batched lookup of O(log n) nodes', async () => {
    const store = new CountingStore(new MemoryNodeStore());
    const log = new MerkleLog(store);
    for (let i = 0; i < 5000; i += 1000) await log.appendData(leaves(i, i + 1000));
    store.getBatches.length = 0;
    await log.inclusionProof(1234, 4999);
    await log.consistencyProof(777, 4999);
    expect(store.getBatches).toHaveLength(2);
    for (const batch of store.getBatches) expect(batch.length).toBeLessThanOrEqual(2 * Math.log2(5000));
  });

  it('proves past tree sizes after the log has grown', async () => {
    const log = new MerkleLog(new MemoryNodeStore());
    await log.appendData(leaves(0, 3));
    const rootAt3 = await log.root();
    const proofAt3 = await log.inclusionProof(1);
    await log.appendData(leaves(3, 10));
    expect(await log.root(3)).toBe(rootAt3);
    expect(await log.inclusionProof(1, 3)).toEqual(proofAt3);
    expect(await log.size()).toBe(10);
  });

  it('refuses sizes and indexes outside the log', async () => {
    const log = new MerkleLog(new MemoryNodeStore());
    await log.appendData(leaves(0, 4));
    await expect(log.root(5)).rejects.toThrow(RangeError);
    await expect(log.inclusionProof(4, 4)).rejects.toThrow(RangeError);
    await expect(log.inclusionProof(-1)).rejects.toThrow(RangeError);
    await expect(log.consistencyProof(5, 4)).rejects.toThrow(RangeError);
    expect(await log.consistencyProof(0, 4)).toEqual([]);
    expect(await log.root(0)).toBe(toHex(EMPTY_ROOT));
  });

  it('says which node is missing when the store has lost one', async () => {
    const store = new MemoryNodeStore();
    const log = new MerkleLog({
      size: () => store.size(),
      putNodes: (nodes) => store.putNodes(nodes),
      getNodes: async (ids) =>
        (await store.getNodes(ids)).map((hash, i) => (ids[i]!.level === 1 ? undefined : hash)),
    });
    await log.appendData(leaves(0, 4));
    await expect(log.inclusionProof(0)).rejects.toThrow('audit tree node (1, 1) is missing');
  });

  it('treats an empty append as a no-op', async () => {
    const log = new MerkleLog(new MemoryNodeStore());
    expect(await log.append([])).toEqual({ first_index: 0, tree_size: 0 });
    expect(await log.appendData(['a', 'b'])).toEqual({ first_index: 0, tree_size: 2 });
    expect(await log.append([])).toEqual({ first_index: 2, tree_size: 2 });
  });
});

describe('MemoryNodeStore', () => {
  it('refuses a node that would leave a gap and ignores a rewrite', async () => {
    const store = new MemoryNodeStore();
    const a = leafHash('a');
    await store.putNodes([{ level: 0, index: 0, hash: a }]);
    await expect(
      store.putNodes([
        { level: 0, index: 1, hash: a },
        { level: 0, index: 3, hash: a },
      ]),
    ).rejects.toThrow('gap');
    expect(await store.size()).toBe(1); // the bad batch wrote nothing
    await store.putNodes([{ level: 0, index: 0, hash: leafHash('b') }]);
    expect(
      await store.getNodes([
        { level: 0, index: 0 },
        { level: 0, index: 1 },
        { level: 5, index: 0 },
      ]),
    ).toEqual([a, undefined, undefined]);
  });

  it('hands out copies, so callers cannot corrupt the tree', async () => {
    const store = new MemoryNodeStore();
    await store.putNodes([{ level: 0, index: 0, hash: leafHash('a') }]);
    const [copy] = await store.getNodes([{ level: 0, index: 0 }]);
    copy!.fill(0);
    expect(await store.getNodes([{ level: 0, index: 0 }])).toEqual([leafHash('a')]);
  });
});

describe('rangeNodes', () => {
  it('decomposes a range into aligned perfect subtrees, largest first', () => {
    expect(rangeNodes(0, 7)).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(rangeNodes(8, 16)).toEqual([{ level: 3, index: 1 }]);
  });
});

describe('recomputeRoot', () => {
  it('streams async batches and stops at treeSize without reading further', async () => {
    let batchesRead = 0;
    async function* batches() {
      for (let i = 0; i < 100; i += 10) {
        batchesRead += 1;
        yield leaves(i, i + 10);
      }
    }
    const log = new MerkleLog(new MemoryNodeStore());
    await log.appendData(leaves(0, 100));

    expect(await recomputeRoot(batches())).toEqual({ tree_size: 100, root_hash: await log.root() });
    batchesRead = 0;
    expect(await recomputeRoot(batches(), { treeSize: 25 })).toEqual({
      tree_size: 25,
      root_hash: await log.root(25),
    });
    expect(batchesRead).toBe(3);
    expect(await recomputeRoot([], {})).toEqual({ tree_size: 0, root_hash: toHex(EMPTY_ROOT) });
  });

  it('uses the RFC 6962 domain separation of leaves and nodes', () => {
    // A two-leaf tree's root is not the hash of a leaf whose data is the two leaf hashes.
    const a = leafHash('a');
    const b = leafHash('b');
    expect(nodeHash(a, b)).not.toEqual(leafHash(Buffer.concat([a, b])));
  });
});
