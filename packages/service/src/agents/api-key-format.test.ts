import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.ts';

describe('API key format', () => {
  it('makes prefixed, checksummed keys of 256 random bits, distinct each time', () => {
    const keys = Array.from({ length: 200 }, () => generateApiKey());
    for (const k of keys) {
      expect(k.key.startsWith(API_KEY_PREFIX)).toBe(true);
      expect(k.key).toHaveLength(API_KEY_PREFIX.length + 43 + 6);
      expect(isWellFormedApiKey(k.key)).toBe(true);
      expect(k.sha256.equals(hashApiKey(k.key))).toBe(true);
      expect(k.displayPrefix).toBe(k.key.slice(0, 11));
    }
    expect(new Set(keys.map((k) => k.key)).size).toBe(200);
  });

  it('refuses a key with a changed character, a wrong prefix or a wrong length', () => {
    const { key } = generateApiKey();
    const i = 20;
    const flipped = key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);
    expect(isWellFormedApiKey(flipped)).toBe(false);
    expect(isWellFormedApiKey(`ghp_${key.slice(5)}`)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${key}x`)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });
});
