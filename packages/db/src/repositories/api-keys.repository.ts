import type { SqlOrTx } from '../client.ts';

export interface ApiKeyRow {
  id: number;
  prefix: string;
  scopes: string[];
  trial_limit: number;
  used: number;
  created_at: Date;
  last_used_at: Date | null;
}

export function apiKeysRepository(sql: SqlOrTx) {
  return {
    async insert(key: {
      prefix: string;
      secretSha256: Buffer;
      scopes: string[];
      trialLimit: number;
      createdIpHash: string | null;
    }): Promise<ApiKeyRow> {
      const [row] = await sql<ApiKeyRow[]>`
        INSERT INTO api_keys (prefix, secret_sha256, scopes, trial_limit, created_ip_hash)
        VALUES (${key.prefix}, ${key.secretSha256}, ${key.scopes}, ${key.trialLimit}, ${key.createdIpHash})
        RETURNING id, prefix, scopes, trial_limit, used, created_at, last_used_at`;
      return row!;
    },

    async findBySecretHash(secretSha256: Buffer): Promise<ApiKeyRow | undefined> {
      const [row] = await sql<ApiKeyRow[]>`
        SELECT id, prefix, scopes, trial_limit, used, created_at, last_used_at
        FROM api_keys WHERE secret_sha256 = ${secretSha256}`;
      return row;
    },

    /**
     * Finds a key by the hash of its secret and uses one check of it, in one statement (the
     * agent-query hot path). 'unknown' when no such key, 'exhausted' when its checks are used up.
     */
    async consumeCheckByHash(
      secretSha256: Buffer,
    ): Promise<{ key: ApiKeyRow; remaining: number } | 'unknown' | 'exhausted'> {
      const [row] = await sql<(ApiKeyRow & { remaining: number })[]>`
        UPDATE api_keys SET used = used + 1, last_used_at = now()
        WHERE secret_sha256 = ${secretSha256} AND used < trial_limit
        RETURNING id, prefix, scopes, trial_limit, used, created_at, last_used_at, trial_limit - used AS remaining`;
      if (row) {
        const { remaining, ...key } = row;
        return { key, remaining };
      }
      return (await this.findBySecretHash(secretSha256)) ? 'exhausted' : 'unknown';
    },

    /**
     * Uses one check of the key's allowance, atomically: the row lock of the UPDATE serialises
     * concurrent callers, so N concurrent calls on a key with k checks left succeed exactly k
     * times. Returns the checks remaining, or null when the allowance is used up.
     */
    async consumeCheck(keyId: number): Promise<{ remaining: number } | null> {
      const [row] = await sql<{ remaining: number }[]>`
        UPDATE api_keys SET used = used + 1, last_used_at = now()
        WHERE id = ${keyId} AND used < trial_limit
        RETURNING trial_limit - used AS remaining`;
      return row ?? null;
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
