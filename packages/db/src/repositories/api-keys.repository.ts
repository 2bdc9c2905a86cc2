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
     * Grants checks to many requests at once (group commit of the agent-query hot path): for
     * each key hash, `wanted` checks are asked for; the statement locks each key row, grants
     * min(wanted, remaining) and returns how many checks were left before and how many were
     * granted. Unknown hashes are absent from the answer. Exact under any concurrency: the row
     * lock orders the grants.
     */
    async grantChecks(
      requests: Array<{ secretSha256: Buffer; wanted: number }>,
    ): Promise<Array<{ secret_hex: string; key: ApiKeyRow; remaining_before: number; granted: number }>> {
      if (requests.length === 0) return [];
      const rows = await sql<
        (ApiKeyRow & { secret_hex: string; remaining_before: number; granted: number })[]
      >`
        WITH req AS (
          SELECT decode(h, 'hex') AS h, k FROM unnest(${requests.map((r) => r.secretSha256.toString('hex'))}::text[],
            ${requests.map((r) => r.wanted)}::int[]) AS x(h, k)
        ),
        cur AS (
          SELECT a.id, a.used, a.trial_limit, req.k FROM api_keys a JOIN req ON a.secret_sha256 = req.h
          ORDER BY a.id FOR UPDATE OF a
        )
        UPDATE api_keys a SET used = LEAST(cur.trial_limit, cur.used + cur.k),
          last_used_at = CASE WHEN cur.used < cur.trial_limit THEN now() ELSE a.last_used_at END
        FROM cur WHERE a.id = cur.id
        RETURNING a.id, a.prefix, a.scopes, a.trial_limit, a.used, a.created_at, a.last_used_at,
          encode(a.secret_sha256, 'hex') AS secret_hex, cur.trial_limit - cur.used AS remaining_before,
          LEAST(cur.k, cur.trial_limit - cur.used) AS granted`;
      return rows.map(({ secret_hex, remaining_before, granted, ...key }) => ({
        secret_hex,
        key,
        remaining_before,
        granted,
      }));
    },
  };
}

export type ApiKeysRepository = ReturnType<typeof apiKeysRepository>;
