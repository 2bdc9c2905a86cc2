import type { KeyStore, PublicSigningJwk, StoredSigningKey } from '@observatory/receipts';
import type { JWK } from 'jose';
import type { Sql } from '../client.ts';

// Serialises inserts so that `seq` order is commit order: two processes that each generated
// a first key at once then agree on the older one (see receipts' loadSigningKeys).
const SIGNING_KEYS_LOCK = 724_310_002;

interface SigningKeyRow {
  kid: string;
  private_jwk: JWK;
  public_jwk: PublicSigningJwk;
  created_at: Date;
  retired_at: Date | null;
}

/** Receipt signing keys in Postgres, so every API replica signs with the same key. */
export function signingKeysRepository(sql: Sql): KeyStore {
  return {
    async list(): Promise<StoredSigningKey[]> {
      return sql<SigningKeyRow[]>`
        SELECT kid, private_jwk, public_jwk, created_at, retired_at FROM signing_keys ORDER BY seq`;
    },
    async insert(key: StoredSigningKey): Promise<void> {
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${SIGNING_KEYS_LOCK})`;
        await tx`
          INSERT INTO signing_keys (kid, private_jwk, public_jwk, created_at, retired_at)
          VALUES (${key.kid}, ${tx.json(key.private_jwk as never)}, ${tx.json(key.public_jwk as never)},
                  ${key.created_at}, ${key.retired_at})
          ON CONFLICT (kid) DO NOTHING`;
      });
    },
    async retire(kid: string, at: Date): Promise<void> {
      await sql`UPDATE signing_keys SET retired_at = ${at} WHERE kid = ${kid} AND retired_at IS NULL`;
    },
  };
}
