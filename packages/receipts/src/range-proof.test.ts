import { describe, expect, it } from 'vitest';
import { fromHex, leafHash, toHex } from './merkle.ts';
import { MerkleLog } from './merkle-log.ts';
import { MemoryNodeStore } from './node-store.ts';
import { rootFromRange } from './range-proof.ts';

describe('range proofs', () => {
  it('recompute the root for every range of every tree up to 24 leaves, and catch any change', async () => {
    const leaves = Array.from({ length: 24 }, (_, i) => leafHash(`leaf ${i}`));
    const log = new MerkleLog(new MemoryNodeStore());
    for (let n = 1; n <= 24; n++) {
      await log.append([leaves[n - 1]!]);
      const root = await log.root(n);
      for (let a = 0; a < n; a++) {
        for (let b = a + 1; b <= n; b++) {
          const proof = (await log.rangeProof(a, b, n)).map((h) => fromHex(h)!);
          const slice = leaves.slice(a, b);
          expect(toHex(rootFromRange(slice, a, n, proof)!)).toBe(root);
          // a changed leaf, a dropped leaf, or a proof hash too few: never the same root
          const changed = [...slice];
          changed[0] = leafHash('forged');
          expect(toHex(rootFromRange(changed, a, n, proof)!)).not.toBe(root);
          const asHex = (h: Uint8Array | null) => (h ? toHex(h) : null);
          if (b - a > 1) expect(asHex(rootFromRange(slice.slice(1), a, n, proof))).not.toBe(root);
          if (proof.length > 0) expect(asHex(rootFromRange(slice, a, n, proof.slice(1)))).not.toBe(root);
        }
      }
    }
  });
});
