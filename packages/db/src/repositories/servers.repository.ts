import { inTransaction, type SqlOrTx } from '../client.ts';

export type ServerSource = 'registered' | 'reported' | 'imported';

export interface ServerRow {
  id: number;
  url: string;
  slug: string;
  name: string;
  description: string | null;
  category: string;
  github_url: string | null;
  source: ServerSource;
  created_at: Date;
  updated_at: Date;
  next_probe_at: Date;
  consecutive_failures: number;
  last_outcome: string | null;
  last_probe_at: Date | null;
  last_up_at: Date | null;
  last_error: string | null;
  last_error_at: Date | null;
  last_latency_ms: number | null;
  protocol_version: string | null;
  server_info: { name: string; version: string } | null;
  tools_hash: string | null;
  tools: Array<{ name: string; hash: string }> | null;
}

export interface NewServer {
  /** Already normalized (packages/probe normalizeServerUrl). */
  url: string;
  name: string;
  description?: string | null;
  category: string;
  github_url?: string | null;
  source: ServerSource;
}

/** A lower-case, dash-separated slug for status pages and badges ("Acme Weather!" → "acme-weather"). */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  return slug || 'server';
}

export interface DueServer {
  id: number;
  url: string;
  /** The slot this probe belongs to: the next_probe_at that made it due. */
  slot: Date;
}

export function serversRepository(sql: SqlOrTx) {
  return {
    async findById(id: number): Promise<ServerRow | undefined> {
      const [row] = await sql<ServerRow[]>`SELECT * FROM servers WHERE id = ${id}`;
      return row;
    },

    async findByUrl(url: string): Promise<ServerRow | undefined> {
      const [row] = await sql<ServerRow[]>`SELECT * FROM servers WHERE url = ${url}`;
      return row;
    },

    async findBySlug(slug: string): Promise<ServerRow | undefined> {
      const [row] = await sql<ServerRow[]>`SELECT * FROM servers WHERE slug = ${slug}`;
      return row;
    },

    /** A slug, a normalized URL, or a display name (case-insensitive), in that order. */
    async findByIdentifier(identifier: string): Promise<ServerRow | undefined> {
      const [row] = await sql<ServerRow[]>`
        SELECT * FROM servers
        WHERE slug = ${identifier.toLowerCase()} OR url = ${identifier} OR lower(name) = lower(${identifier})
        ORDER BY (slug = ${identifier.toLowerCase()}) DESC, (url = ${identifier}) DESC, id
        LIMIT 1`;
      return row;
    },

    /**
     * Inserts a server, or updates the descriptive fields of the one with the same normalized
     * URL. A registration upgrades a 'reported' server to 'registered' but never downgrades.
     * New servers are due for a probe at once.
     */
    async upsert(server: NewServer): Promise<{ server: ServerRow; created: boolean }> {
      const base = slugify(server.name);
      // Try the plain slug first, then numbered ones: the unique index is the arbiter.
      for (let attempt = 0; attempt < 20; attempt++) {
        const slug = attempt === 0 ? base : `${base}-${attempt + 1}`;
        const rows = await sql<(ServerRow & { created: boolean })[]>`
          INSERT INTO servers (url, slug, name, description, category, github_url, source)
          VALUES (${server.url}, ${slug}, ${server.name}, ${server.description ?? null},
                  ${server.category}, ${server.github_url ?? null}, ${server.source})
          ON CONFLICT (url) DO UPDATE SET
            name = CASE WHEN EXCLUDED.source = 'reported' THEN servers.name ELSE EXCLUDED.name END,
            description = COALESCE(EXCLUDED.description, servers.description),
            category = CASE WHEN EXCLUDED.source = 'reported' THEN servers.category ELSE EXCLUDED.category END,
            github_url = COALESCE(EXCLUDED.github_url, servers.github_url),
            source = CASE WHEN servers.source = 'reported' THEN EXCLUDED.source ELSE servers.source END,
            updated_at = now()
          RETURNING *, (xmax = 0) AS created`.catch((err: { code?: string; constraint_name?: string }) => {
          if (err.code === '23505' && err.constraint_name === 'servers_slug_key') return null;
          throw err;
        });
        if (rows?.[0]) {
          const { created, ...row } = rows[0];
          return { server: row as ServerRow, created };
        }
      }
      throw new Error(`could not find a free slug for ${base}`);
    },

    /**
     * Claims the servers whose probe is due, in one statement. SKIP LOCKED lets several
     * schedulers run at once: each row is claimed by exactly one of them, and next_probe_at
     * moves past the slot (a lease: if the probe is lost, the server is due again after one
     * interval).
     */
    async claimDue(opts: {
      now: Date;
      limit: number;
      leaseSeconds: number;
      jitterSeconds: number;
    }): Promise<DueServer[]> {
      return sql<DueServer[]>`
        WITH due AS (
          SELECT id, next_probe_at AS slot FROM servers
          WHERE next_probe_at <= ${opts.now}
          ORDER BY next_probe_at
          LIMIT ${opts.limit}
          FOR NO KEY UPDATE SKIP LOCKED
        )
        UPDATE servers s
        SET next_probe_at = ${opts.now}::timestamptz
          + make_interval(secs => ${opts.leaseSeconds} + random() * ${opts.jitterSeconds})
        FROM due WHERE s.id = due.id
        RETURNING s.id, s.url, due.slot`;
    },

    /** Gives claimed slots back (their jobs could not be enqueued), so the servers stay due. */
    async releaseClaims(claims: DueServer[]): Promise<void> {
      if (claims.length === 0) return;
      // Rows locked in id order first (a statement of its own, so every lock is taken before
      // the update starts), like every multi-row writer of servers: no deadlock.
      const ids = claims.map((c) => c.id);
      await inTransaction(sql, async (tx) => {
        await tx`SELECT id FROM servers WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE`;
        await tx`
          UPDATE servers s SET next_probe_at = c.slot
          FROM unnest(${ids}::bigint[], ${claims.map((c) => c.slot.toISOString())}::timestamptz[])
            AS c(id, slot)
          WHERE s.id = c.id`;
      });
    },

    /** Makes a server due now (e.g. just registered, or an operator asked for a probe). */
    async probeSoon(id: number, at: Date = new Date()): Promise<void> {
      await sql`UPDATE servers SET next_probe_at = ${at} WHERE id = ${id}`;
    },

    async count(): Promise<number> {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM servers`;
      return row?.n ?? 0;
    },

    async list(opts: {
      category?: string | undefined;
      afterId?: number | undefined;
      limit: number;
    }): Promise<ServerRow[]> {
      return sql<ServerRow[]>`
        SELECT * FROM servers
        WHERE (${opts.category ?? null}::text IS NULL OR category = ${opts.category ?? null})
          AND id > ${opts.afterId ?? 0}
        ORDER BY id
        LIMIT ${opts.limit}`;
    },
  };
}

export type ServersRepository = ReturnType<typeof serversRepository>;
