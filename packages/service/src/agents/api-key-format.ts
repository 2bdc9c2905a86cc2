import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Agent API keys look like GitHub's tokens: a type prefix, the secret, and a checksum:
 *   mcpt_ + 43 base62 chars (256 random bits) + 6 base62 chars (CRC32 of what precedes)
 * The prefix makes leaked keys recognisable by secret scanners; the checksum lets us refuse a
 * mistyped or made-up key without a database lookup. Only SHA-256(key) is stored.
 */
export const API_KEY_PREFIX = 'mcpt_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_CHARS = 43; // 62^43 > 2^256
const CHECKSUM_CHARS = 6; // 62^6 > 2^32
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${SECRET_CHARS + CHECKSUM_CHARS}}$`);

function base62(value: bigint, width: number): string {
  let out = '';
  let v = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(v % 62n)] + out;
    v /= 62n;
  }
  return out;
}

function checksum(body: string): string {
  return base62(BigInt(crc32(body)), CHECKSUM_CHARS);
}

export interface NewApiKey {
  /** The secret, shown to the agent once. */
  key: string;
  /** What we keep: SHA-256 of the key. */
  sha256: Buffer;
  /** Shown in logs and audits: the type prefix plus the first 6 secret characters. */
  displayPrefix: string;
}

export function generateApiKey(): NewApiKey {
  const secret = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), SECRET_CHARS);
  const body = `${API_KEY_PREFIX}${secret}`;
  const key = `${body}${checksum(body)}`;
  return { key, sha256: hashApiKey(key), displayPrefix: key.slice(0, API_KEY_PREFIX.length + 6) };
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** Well-formed and checksum-valid (says nothing about whether the key exists). */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(0, -CHECKSUM_CHARS);
  return checksum(body) === key.slice(-CHECKSUM_CHARS);
}
