/**
 * Ed25519 signing keys: generation, loading at start-up, rotation, the JWKS, and the KeyRing
 * that signs compact JWS for receipts and checkpoints.
 */
import {
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  type JsonWebKey as NodeJwk,
  sign,
} from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Jwks, KeyStore, PublicSigningJwk, StoredSigningKey } from './key-store.ts';
import type { Signer } from './signing-worker.ts';

/** The JWS algorithm of every signature we make (Ed25519, RFC 8037). */
export const SIGNING_ALG = 'EdDSA';

/** Makes a fresh Ed25519 key (jose / WebCrypto) in stored form. */
export async function generateSigningKey(now: Date = new Date()): Promise<StoredSigningKey> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { crv: 'Ed25519', extractable: true });
  return storedKeyFromPrivateJwk(await exportJWK(privateKey), now);
}

/**
 * Checks a private OKP Ed25519 JWK and derives the rest: the public key from `d` (a JWK whose `x`
 * does not match its `d` is refused), and the kid as the RFC 7638 thumbprint of the public key.
 */
export async function storedKeyFromPrivateJwk(jwk: JWK, now: Date = new Date()): Promise<StoredSigningKey> {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string') {
    throw new Error('signing key must be a private Ed25519 JWK: {"kty":"OKP","crv":"Ed25519","d":…,"x":…}');
  }
  const x = derivePublicX(jwk);
  if (jwk.x !== undefined && jwk.x !== x) throw new Error('signing key JWK: "x" does not match "d"');
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }, 'sha256');
  return {
    kid,
    private_jwk: { kty: 'OKP', crv: 'Ed25519', x, d: jwk.d },
    public_jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, alg: SIGNING_ALG, use: 'sig' },
    created_at: now,
    retired_at: null,
  };
}

function derivePublicX(jwk: JWK): string {
  // node derives the public key from d alone and ignores x (it only insists that x is a string).
  const privateKey = importPrivateKey({ kty: 'OKP', crv: 'Ed25519', d: jwk.d, x: '' });
  const x = createPublicKey(privateKey).export({ format: 'jwk' }).x;
  if (typeof x !== 'string') throw new Error('signing key JWK: cannot derive the public key');
  return x;
}

function importPrivateKey(jwk: JWK): KeyObject {
  try {
    return createPrivateKey({ key: jwk as NodeJwk, format: 'jwk' });
  } catch {
    // Never echo the key material.
    throw new Error('signing key JWK is not a valid Ed25519 private key');
  }
}

export interface RingContents {
  /** The key that signs. */
  active: StoredSigningKey;
  published: PublicSigningJwk[];
}

/**
 * The active signing key plus every public key to publish. Signing is synchronous and uses
 * node:crypto directly (about 3× the throughput of jose's async CompactSign on this workload; see
 * `npm run bench:receipts`); the output is a standard compact JWS that jose or any JOSE library
 * verifies.
 */
export class KeyRing {
  #key!: KeyObject;
  #kid!: string;
  #jwks!: Jwks;
  /** base64url protected header per `typ`: the header never changes for a given key. */
  readonly #headers = new Map<string, string>();
  readonly #reload: (() => Promise<RingContents>) | undefined;

  /** Made by loadSigningKeys; `reload` re-reads the store for refresh(). */
  constructor(contents: RingContents, reload?: () => Promise<RingContents>) {
    this.#install(contents);
    this.#reload = reload;
  }

  /** kid of the active signing key. */
  get kid(): string {
    return this.#kid;
  }

  /**
   * The public JWKS to serve at /.well-known/jwks.json: the active key and every retired or
   * otherwise known key, so receipts signed before a rotation still verify. The same frozen
   * object is returned until refresh(), so it can double as a cache key.
   */
  jwks(): Jwks {
    return this.#jwks;
  }

  /** Compact JWS over JSON `payload`, protected header {alg: 'EdDSA', kid, typ}. */
  sign(typ: string, payload: unknown): string {
    const signingInput = this.#signingInput(typ, payload);
    return `${signingInput}.${sign(null, Buffer.from(signingInput), this.#key).toString('base64url')}`;
  }

  /**
   * The same JWS for each payload, signed on `worker`'s thread. The key and kid are taken when
   * called, so a rotation meanwhile cannot pair one key's kid with the other's signature.
   */
  async signMany(typ: string, payloads: readonly unknown[], worker: Signer): Promise<string[]> {
    const inputs = payloads.map((p) => this.#signingInput(typ, p));
    const signatures = await worker.sign(this.#key, inputs);
    return inputs.map((input, i) => `${input}.${signatures[i]}`);
  }

  #signingInput(typ: string, payload: unknown): string {
    let header = this.#headers.get(typ);
    if (header === undefined) {
      header = Buffer.from(JSON.stringify({ alg: SIGNING_ALG, kid: this.#kid, typ })).toString('base64url');
      this.#headers.set(typ, header);
    }
    return `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  }

  /**
   * Re-reads the key store: picks up a rotation done by another process and newly published
   * keys. Keeps the current signing key if the store has no active one.
   */
  async refresh(): Promise<void> {
    if (this.#reload) this.#install(await this.#reload());
  }

  #install({ active, published }: RingContents): void {
    if (active.kid !== this.#kid) {
      this.#key = importPrivateKey(active.private_jwk);
      this.#kid = active.kid;
      this.#headers.clear();
    }
    this.#jwks = Object.freeze({ keys: published.map((jwk) => Object.freeze({ ...jwk })) }) as Jwks;
  }
}

export interface LoadSigningKeysOptions {
  store: KeyStore;
  /** RECEIPT_SIGNING_JWK: a private OKP Ed25519 JWK as JSON. When set, it is the signing key. */
  envJwk?: string | undefined;
  /** Clock for created_at/retired_at (tests). */
  now?: () => Date;
}

/**
 * Loads the signing keys at start-up.
 *
 * - With `envJwk`, that key signs; the store's keys are still published (old receipts verify).
 *   The env key is not written to the store.
 * - Else the store's first active key (in list order, i.e. the oldest) signs.
 * - Else a key is generated and inserted. Two processes starting together may both do this;
 *   each then re-lists and takes the first active key, so both converge on the same key (exact
 *   when list order is commit order, as with the SQL store's advisory lock), and the one whose
 *   key lost retires it, unused.
 */
export async function loadSigningKeys(options: LoadSigningKeysOptions): Promise<KeyRing> {
  const now = options.now ?? (() => new Date());
  const envKey = options.envJwk ? await parseEnvJwk(options.envJwk, now()) : null;

  const resolve = async (generateIfMissing: boolean) => {
    let keys = await options.store.list();
    let active = envKey ?? firstActive(keys);
    if (!active && generateIfMissing) {
      const fresh = await generateSigningKey(now());
      await options.store.insert(fresh);
      keys = await options.store.list();
      active = firstActive(keys);
      if (!active) throw new Error('key store returned no active key right after inserting one');
      if (active.kid !== fresh.kid) await options.store.retire(fresh.kid, now());
    }
    return { active, keys };
  };
  const contents = (active: StoredSigningKey, keys: readonly StoredSigningKey[]): RingContents => {
    // The signing key first, then the rest in store order; deduplicated by kid.
    const published = new Map<string, PublicSigningJwk>([[active.kid, active.public_jwk]]);
    for (const key of keys) if (!published.has(key.kid)) published.set(key.kid, key.public_jwk);
    return { active, published: [...published.values()] };
  };

  const initial = await resolve(true);
  let active = initial.active!;
  return new KeyRing(contents(active, initial.keys), async () => {
    const next = await resolve(false);
    // No active key left in the store (all retired by hand): keep signing with the current one.
    active = next.active ?? active;
    return contents(active, next.keys);
  });
}

/**
 * Starts signing with a new key: inserts it, then retires the active keys listed before it.
 * (Only those: two rotations at once then leave the later key active instead of retiring each
 * other's.) Retired keys stay in the store and in the JWKS. Other processes switch on their next
 * KeyRing.refresh(); until then they sign with the retired key, which still verifies. Not
 * meaningful while RECEIPT_SIGNING_JWK pins the key.
 */
export async function rotateKey(store: KeyStore, now: Date = new Date()): Promise<StoredSigningKey> {
  const fresh = await generateSigningKey(now);
  await store.insert(fresh);
  for (const key of await store.list()) {
    if (key.kid === fresh.kid) break;
    if (key.retired_at === null) await store.retire(key.kid, now);
  }
  return fresh;
}

function firstActive(keys: readonly StoredSigningKey[]): StoredSigningKey | undefined {
  return keys.find((key) => key.retired_at === null);
}

async function parseEnvJwk(text: string, now: Date): Promise<StoredSigningKey> {
  let jwk: unknown;
  try {
    jwk = JSON.parse(text);
  } catch {
    throw new Error('RECEIPT_SIGNING_JWK is not valid JSON');
  }
  if (typeof jwk !== 'object' || jwk === null) throw new Error('RECEIPT_SIGNING_JWK must be a JSON object');
  try {
    return await storedKeyFromPrivateJwk(jwk as JWK, now);
  } catch (error) {
    throw new Error(`RECEIPT_SIGNING_JWK: ${(error as Error).message}`);
  }
}
