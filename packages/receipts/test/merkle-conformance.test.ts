/**
 * RFC 6962 conformance of the Merkle log: published test vectors, then exhaustive agreement with
 * the literal recursive definitions (rfc6962-reference.ts) for every tree size 1..70 and every m.
 */
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT,
  fromHex,
  leafHash,
  MemoryNodeStore,
  MerkleLog,
  rootFromInclusionProof,
  StreamingRoot,
  toHex,
  verifyConsistencyProof,
} from '../src/index.ts';
import { mth, path, proof } from './rfc6962-reference.ts';

const hex = (h: Uint8Array) => toHex(h);
const unhex = (s: string) => fromHex(s)!;

// The certificate-transparency test corpus (certificate-transparency-go merkle tests, also used
// by transparency-dev/merkle testonly/constants.go).
const CT_LEAVES = [
  '',
  '00',
  '10',
  '2021',
  '3031',
  '40414243',
  '5051525354555657',
  '606162636465666768696a6b6c6d6e6f',
].map((h) => Buffer.from(h, 'hex'));

const CT_ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

async function logOf(leaves: readonly Uint8Array[], batch = 1): Promise<MerkleLog> {
  const log = new MerkleLog(new MemoryNodeStore());
  for (let i = 0; i < leaves.length; i += batch) await log.appendData(leaves.slice(i, i + batch));
  return log;
}

describe('RFC 6962 test vectors', () => {
  it('hashes the empty tree to SHA-256 of nothing', async () => {
    expect(hex(EMPTY_ROOT)).toBe(CT_ROOTS[0]);
    expect(await new MerkleLog(new MemoryNodeStore()).root()).toBe(CT_ROOTS[0]);
  });

  it('gives the published root for every size 1..8', async () => {
    const log = await logOf(CT_LEAVES);
    const streaming = new StreamingRoot();
    for (let n = 1; n <= 8; n++) {
      streaming.addLeafData(CT_LEAVES[n - 1]!);
      expect(await log.root(n)).toBe(CT_ROOTS[n]);
      expect(hex(streaming.root())).toBe(CT_ROOTS[n]);
    }
  });

  it('gives the published inclusion proofs', async () => {
    const log = await logOf(CT_LEAVES);
    expect(await log.inclusionProof(0, 8)).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(await log.inclusionProof(5, 8)).toEqual([
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(await log.inclusionProof(0, 1)).toEqual([]);
  });

  it('gives the published consistency proofs', async () => {
    const log = await logOf(CT_LEAVES);
    expect(await log.consistencyProof(1, 1)).toEqual([]);
    expect(await log.consistencyProof(1, 8)).toEqual([
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ]);
    expect(await log.consistencyProof(6, 8)).toEqual([
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ]);
    expect(await log.consistencyProof(2, 5)).toEqual([
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ]);
  });
});

describe('agreement with the literal RFC definitions, sizes 1..70, every m', () => {
  const MAX = 70;
  const leaves = Array.from({ length: MAX }, (_, i) =>
    i < 8 ? CT_LEAVES[i]! : Buffer.from(`audit event #${i}`),
  );

  it('builds the same tree whatever the append batching', async () => {
    const roots = await Promise.all(
      [1, 3, 7, 16, MAX].map(async (batch) => (await logOf(leaves, batch)).root()),
    );
    expect(new Set(roots)).toEqual(new Set([hex(mth(leaves))]));
  });

  it('matches MTH, PATH and PROOF, and the RFC 9162 verifiers accept them', async () => {
    const log = await logOf(leaves, 5);
    let checked = 0;
    for (let n = 1; n <= MAX; n++) {
      const d = leaves.slice(0, n);
      const root = mth(d);
      expect(await log.root(n)).toBe(hex(root));
      for (let m = 0; m < n; m++) {
        const audit = await log.inclusionProof(m, n);
        expect(audit).toEqual(path(m, d).map(hex));
        expect(rootFromInclusionProof(leafHash(d[m]!), m, n, audit.map(unhex))).toEqual(root);

        const old = m + 1; // consistency for every 0 < old <= n
        const consistency = await log.consistencyProof(old, n);
        expect(consistency).toEqual(old === n ? [] : proof(old, d).map(hex));
        expect(verifyConsistencyProof(old, n, mth(d.slice(0, old)), root, consistency.map(unhex))).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBe((MAX * (MAX + 1)) / 2);
  });

  it('rejects every single-hash tampering, wrong index and wrong size', async () => {
    const log = await logOf(leaves, 9);
    for (const n of [2, 3, 5, 8, 13, 31, 32, 33, 69]) {
      const root = unhex(await log.root(n));
      for (let m = 0; m < n; m++) {
        const audit = (await log.inclusionProof(m, n)).map(unhex);
        const leaf = leafHash(leaves[m]!);
        for (let i = 0; i < audit.length; i++) {
          const tampered = audit.map((h, j) =>
            j === i ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ 1 : b))) : h,
          );
          expect(rootFromInclusionProof(leaf, m, n, tampered)).not.toEqual(root);
        }
        expect(rootFromInclusionProof(leaf, (m + 1) % n, n, audit)).not.toEqual(root);
        // The size only shapes the walk, so check a proof claimed for the wrong size against that size's root.
        expect(rootFromInclusionProof(leaf, m, n + 1, audit)).not.toEqual(unhex(await log.root(n + 1)));
        expect(rootFromInclusionProof(leaf, m, n, audit.slice(0, -1))).not.toEqual(root);

        const old = m + 1;
        if (old === n) continue;
        const oldRoot = unhex(await log.root(old));
        const consistency = (await log.consistencyProof(old, n)).map(unhex);
        for (let i = 0; i < consistency.length; i++) {
          const tampered = consistency.map((h, j) =>
            j === i ? Buffer.from(h.map((b, k) => (k === 31 ? b ^ 0x80 : b))) : h,
          );
          expect(verifyConsistencyProof(old, n, oldRoot, root, tampered)).toBe(false);
        }
        expect(verifyConsistencyProof(old, n, root, oldRoot, consistency)).toBe(false);
        expect(verifyConsistencyProof(old, n, oldRoot, root, [])).toBe(false);
      }
    }
  });
});
