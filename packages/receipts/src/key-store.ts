/**
 * Where signing keys live. The service signs with one active Ed25519 key; retired keys stay
 * stored (and published in the JWKS) so receipts signed with them keep verifying.
 *
 * SQL sketch for the Postgres implementation (packages/db):
 *   CREATE TABLE signing_keys (seq bigint GENERATED ALWAYS AS IDENTITY, kid text PRIMARY KEY,
 *     private_jwk jsonb NOT NULL, public_jwk jsonb NOT NULL, created_at timestamptz NOT NULL,
 *     retired_at timestamptz);
 *   list():   SELECT … ORDER BY seq
 *   insert(): in one transaction: SELECT pg_advisory_xact_lock(<signing-keys lock id>);
 *             INSERT … ON CONFLICT (kid) DO NOTHING
 *             — the lock makes `seq` order equal commit order, which is what lets two processes
 *             that each generated a first key agree on the same one (see loadSigningKeys).
 *   retire(): UPDATE signing_keys SET retired_at = $at WHERE kid = $kid AND retired_at IS NULL
 */
import type { JWK } from 'jose';

/** The public half of a signing key as published in the JWKS. */
export interface PublicSigningJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** A JSON Web Key Set (RFC 7517 §5) of our public keys. */
export interface Jwks {
  keys: PublicSigningJwk[];
}

export interface StoredSigningKey {
  /** RFC 7638 JWK thumbprint (SHA-256, base64url) of the public key. */
  kid: string;
  /** Private OKP JWK: kty, crv, x, d. A secret: never log it, never publish it. */
  private_jwk: JWK;
  public_jwk: PublicSigningJwk;
  created_at: Date;
  /** When the key stopped signing; null while active. Retired keys still verify. */
  retired_at: Date | null;
}

export interface KeyStore {
  /** Every key, active and retired, in insertion order (oldest first). */
  list(): Promise<StoredSigningKey[]>;
  /** Adds a key. A kid already stored is left as it is (insert is idempotent). */
  insert(key: StoredSigningKey): Promise<void>;
  /** Marks a key retired at `at`. Unknown or already retired kids are left as they are. */
  retire(kid: string, at: Date): Promise<void>;
}

/** KeyStore in memory, for tests and throwaway processes. */
export class MemoryKeyStore implements KeyStore {
  readonly #keys: StoredSigningKey[] = [];

  async list(): Promise<StoredSigningKey[]> {
    return this.#keys.map((key) => ({ ...key }));
  }

  async insert(key: StoredSigningKey): Promise<void> {
    if (!this.#keys.some((k) => k.kid === key.kid)) this.#keys.push({ ...key });
  }

  async retire(kid: string, at: Date): Promise<void> {
    const key = this.#keys.find((k) => k.kid === kid);
    if (key && key.retired_at === null) key.retired_at = at;
  }
}
