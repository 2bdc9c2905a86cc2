import { hashApiKey } from './api-key-format.ts';

/**
 * Authorization headers already found to carry a well-formed key, with the key's SHA-256. An
 * agent sends the same header on every query, and checking its form and checksum and hashing
 * it cost ~13 µs/req of main-thread CPU on /agent-query (profiled); a hit costs one Map get.
 *
 * Only headers of the plain form `Bearer <key>` are remembered (their length is then bounded
 * by the key format), at most `limit` of them, the oldest forgotten first; a header refused by
 * `parse` throws and is never remembered, so it is refused again, the same way, every time.
 * The hashes handed out are shared between asks: read them, never change them.
 */
export class BearerKeyMemo {
  readonly #known = new Map<string, Buffer>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** How many headers are remembered. */
  get size(): number {
    return this.#known.size;
  }

  /** SHA-256 of the header's key; `parse` returns the key from a header or throws. */
  keyHash(authorization: string | undefined, parse: (authorization: string | undefined) => string): Buffer {
    if (authorization !== undefined) {
      const known = this.#known.get(authorization);
      if (known !== undefined) return known;
    }
    const key = parse(authorization);
    const hash = hashApiKey(key);
    if (authorization === `Bearer ${key}`) {
      if (this.#known.size >= this.#limit) this.#known.delete(this.#known.keys().next().value as string);
      this.#known.set(authorization, hash);
    }
    return hash;
  }
}
