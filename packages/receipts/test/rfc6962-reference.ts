/**
 * Test oracle: RFC 6962 §2.1 transcribed as literally as possible — recursive, on the raw leaf
 * data, no storage, no cleverness. The real implementation must agree with it everywhere.
 */
import { createHash } from 'node:crypto';

type Bytes = Uint8Array;

const sha256 = (...parts: Bytes[]): Bytes => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** k: the largest power of two smaller than n (n > 1). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[n]). */
export function mth(d: readonly Bytes[]): Bytes {
  const n = d.length;
  if (n === 0) return sha256();
  if (n === 1) return sha256(Uint8Array.of(0x00), d[0]!);
  const k = splitPoint(n);
  return sha256(Uint8Array.of(0x01), mth(d.slice(0, k)), mth(d.slice(k)));
}

/** PATH(m, D[n]). */
export function path(m: number, d: readonly Bytes[]): Bytes[] {
  const n = d.length;
  if (n === 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...path(m, d.slice(0, k)), mth(d.slice(k))];
  return [...path(m - k, d.slice(k)), mth(d.slice(0, k))];
}

/** PROOF(m, D[n]) = SUBPROOF(m, D[n], true), 0 < m < n. */
export function proof(m: number, d: readonly Bytes[]): Bytes[] {
  return subproof(m, d, true);
}

function subproof(m: number, d: readonly Bytes[], b: boolean): Bytes[] {
  const n = d.length;
  if (m === n) return b ? [] : [mth(d)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(m, d.slice(0, k), b), mth(d.slice(k))];
  return [...subproof(m - k, d.slice(k), false), mth(d.slice(0, k))];
}
