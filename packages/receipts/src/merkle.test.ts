import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromHex, leafHash, nodeHash, toHex } from './merkle.ts';

const reference = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
};

describe('leafHash and nodeHash', () => {
  it('match SHA-256 with the RFC 6962 prefixes for every input size and kind', () => {
    const earlier = leafHash('first');
    for (const size of [0, 1, 1023, 1024, 5000, 70_000]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 31) % 256);
      const text = 'é✓'.repeat(Math.ceil(size / 5)).slice(0, size); // multi-byte UTF-8
      expect(toHex(leafHash(bytes))).toBe(reference(Uint8Array.of(0), bytes));
      expect(toHex(leafHash(text))).toBe(reference(Uint8Array.of(0), Buffer.from(text, 'utf8')));
    }
    // Results never alias the internal scratch buffers.
    expect(toHex(earlier)).toBe(reference(Uint8Array.of(0), Buffer.from('first')));
    const a = leafHash('a');
    const b = leafHash('b');
    const ab = nodeHash(a, b);
    nodeHash(b, a);
    expect(toHex(ab)).toBe(reference(Uint8Array.of(1), a, b));
  });

  it('reads hashes only as 64 lower-case hex digits', () => {
    const hex = toHex(leafHash('x'));
    expect(toHex(fromHex(hex)!)).toBe(hex);
    expect(fromHex(hex.toUpperCase())).toBeNull();
    expect(fromHex(hex.slice(2))).toBeNull();
    expect(fromHex(`${hex}00`)).toBeNull();
  });
});
