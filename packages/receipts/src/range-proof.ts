/**
 * Range proofs: everything an auditor needs, besides the leaves [a, b) themselves, to recompute
 * the root of a tree of size n — the hashes of the maximal subtrees (in the RFC 6962 split)
 * that lie wholly outside [a, b), left to right. With them, an export page that carries every
 * leaf of its index range proves it is complete and unaltered against a signed checkpoint: drop,
 * add or change one row and the recomputed root differs.
 */
import { type Hash, largestPowerOfTwoBelow, nodeHash } from './merkle.ts';

type Range = readonly [start: number, end: number];

function checkArgs(a: number, b: number, n: number) {
  if (
    !(
      Number.isSafeInteger(a) &&
      Number.isSafeInteger(b) &&
      Number.isSafeInteger(n) &&
      0 <= a &&
      a < b &&
      b <= n
    )
  ) {
    throw new RangeError(`range [${a}, ${b}) is not a non-empty range inside a tree of size ${n}`);
  }
}

/** The subtree ranges whose hashes form the range proof of [a, b) in a tree of size n. */
export function rangeProofRanges(a: number, b: number, n: number): Range[] {
  checkArgs(a, b, n);
  const out: Range[] = [];
  const walk = (lo: number, hi: number) => {
    if (hi <= a || lo >= b) {
      out.push([lo, hi]);
      return;
    }
    if (lo >= a && hi <= b) return;
    const k = lo + largestPowerOfTwoBelow(hi - lo);
    walk(lo, k);
    walk(k, hi);
  };
  walk(0, n);
  return out;
}

/**
 * The root of a tree of size n from the leaf hashes of [a, b) (in order) and the range proof.
 * Returns null when the proof has the wrong number of hashes for this range.
 */
export function rootFromRange(
  leafHashes: readonly Hash[],
  a: number,
  n: number,
  proof: readonly Hash[],
): Hash | null {
  const b = a + leafHashes.length;
  checkArgs(a, b, n);
  let next = 0;
  const mth = (lo: number, hi: number): Hash | null => {
    if (hi <= a || lo >= b) return proof[next++] ?? null;
    if (hi - lo === 1) return leafHashes[lo - a]!;
    const k = lo + largestPowerOfTwoBelow(hi - lo);
    const left = mth(lo, k);
    const right = mth(k, hi);
    return left && right ? nodeHash(left, right) : null;
  };
  const root = mth(0, n);
  return root && next === proof.length ? root : null;
}
