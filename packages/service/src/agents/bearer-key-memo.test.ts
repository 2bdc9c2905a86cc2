import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.ts';
import { BearerKeyMemo } from './bearer-key-memo.ts';

/** A parse like the service's: counts its calls, refuses what is not `Bearer <well-formed key>`. */
function counting() {
  let calls = 0;
  const parse = (authorization: string | undefined): string => {
    calls++;
    const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (!match || !isWellFormedApiKey(match[1]!)) throw new Error('refused');
    return match[1]!;
  };
  return { parse, calls: () => calls };
}

describe('BearerKeyMemo', () => {
  it('gives the key hash, parsing a header only the first time', () => {
    const memo = new BearerKeyMemo();
    const { key } = generateApiKey();
    const p = counting();
    const first = memo.keyHash(`Bearer ${key}`, p.parse);
    const again = memo.keyHash(`Bearer ${key}`, p.parse);
    expect(first.equals(hashApiKey(key))).toBe(true);
    expect(again.equals(hashApiKey(key))).toBe(true);
    expect(p.calls()).toBe(1);
    expect(memo.size).toBe(1);
  });

  it('never remembers a refusal: the same header is refused again, through parse', () => {
    const memo = new BearerKeyMemo();
    const { key } = generateApiKey();
    const mistyped = `Bearer ${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
    const p = counting();
    for (const header of [undefined, '', 'Basic abc', mistyped, mistyped]) {
      expect(() => memo.keyHash(header, p.parse)).toThrow('refused');
    }
    expect(p.calls()).toBe(5);
    expect(memo.size).toBe(0);
  });

  it('answers other spellings of the header without remembering them', () => {
    const memo = new BearerKeyMemo();
    const { key } = generateApiKey();
    const p = counting();
    for (const header of [`bearer ${key}`, `Bearer   ${key}  `]) {
      expect(memo.keyHash(header, p.parse).equals(hashApiKey(key))).toBe(true);
      expect(memo.keyHash(header, p.parse).equals(hashApiKey(key))).toBe(true);
    }
    expect(p.calls()).toBe(4);
    expect(memo.size).toBe(0);
  });

  it('keeps at most its limit, forgetting the oldest first', () => {
    const memo = new BearerKeyMemo(3);
    const keys = Array.from({ length: 5 }, () => generateApiKey().key);
    const p = counting();
    for (const key of keys) memo.keyHash(`Bearer ${key}`, p.parse);
    expect(memo.size).toBe(3);
    expect(p.calls()).toBe(5);
    // the last three are remembered, the first two parsed (and hashed) again, correctly
    for (const key of keys.slice(2))
      expect(memo.keyHash(`Bearer ${key}`, p.parse).equals(hashApiKey(key))).toBe(true);
    expect(p.calls()).toBe(5);
    for (const key of keys.slice(0, 2))
      expect(memo.keyHash(`Bearer ${key}`, p.parse).equals(hashApiKey(key))).toBe(true);
    expect(p.calls()).toBe(7);
    expect(memo.size).toBe(3);
  });
});
