/**
 * Receipt ids: `rcpt_` + a 26-character ULID (Crockford base32): 48 bits of milliseconds since
 * the epoch, then 80 random bits. Ids sort by issue time, carry no sequence an outsider could
 * enumerate, and are safe in URLs.
 */
import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export const RECEIPT_ID_PATTERN = /^rcpt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Random bytes are drawn in blocks: one getrandom call per ~400 ids instead of one each. */
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

function randomBytes10(): Uint8Array {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

/** The last `chars` base32 digits of `value` (< 32^chars, an exact integer in a double). */
function base32(value: number, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = CROCKFORD[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

export function newReceiptId(nowMs: number = Date.now()): string {
  const bytes = randomBytes10();
  // Two 40-bit halves, each 8 base32 digits; 40 bits fit a double exactly.
  let high = 0;
  let low = 0;
  for (let i = 0; i < 5; i++) {
    high = high * 256 + bytes[i]!;
    low = low * 256 + bytes[i + 5]!;
  }
  return `rcpt_${base32(nowMs, 10)}${base32(high, 8)}${base32(low, 8)}`;
}

/** The issue time encoded in a receipt id, or null if it is not one. */
export function receiptIdTime(id: string): Date | null {
  if (!RECEIPT_ID_PATTERN.test(id)) return null;
  let ms = 0;
  for (const char of id.slice(5, 15)) ms = ms * 32 + CROCKFORD.indexOf(char);
  return new Date(ms);
}
