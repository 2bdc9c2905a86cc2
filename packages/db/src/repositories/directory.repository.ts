import type { SqlOrTx } from '../client.ts';
import type { ServerRow } from './servers.repository.ts';

/** Read-side queries over all servers: listings, rankings, coverage and totals. */
export function directoryRepository(sql: SqlOrTx) {
  return {
    /** Highest stored score first (ties: more probes, then older); only servers with a score. */
    async leaderboard(opts: { category?: string | undefined; limit: number }): Promise<ServerRow[]> {
      return sql<ServerRow[]>`
        SELECT * FROM servers
        WHERE trust_score IS NOT NULL
          AND (${opts.category ?? null}::text IS NULL OR category = ${opts.category ?? null})
        ORDER BY trust_score DESC, (trust_inputs -> 'probes' ->> 'total')::int DESC NULLS LAST, id
        LIMIT ${opts.limit}`;
    },

    /** Keyset page by id (stable under inserts). */
    async page(opts: {
      category?: string | undefined;
      afterId: number;
      limit: number;
    }): Promise<ServerRow[]> {
      return sql<ServerRow[]>`
        SELECT * FROM servers
        WHERE id > ${opts.afterId} AND (${opts.category ?? null}::text IS NULL OR category = ${opts.category ?? null})
        ORDER BY id LIMIT ${opts.limit}`;
    },

    /**
     * Coverage per category: indexed (tracked at all), with a behavioural record (any probe or
     * report), verifiable at runtime (probed up within the last 24 h).
     */
    async coverage(now: Date): Promise<
      Array<{
        category: string;
        indexed: number;
        with_record: number;
        verifiable: number;
        avg_score: number | null;
      }>
    > {
      return sql`
        SELECT category,
          count(*)::int AS indexed,
          count(*) FILTER (WHERE last_probe_at IS NOT NULL OR (stats -> 'reports_30d' ->> 'total')::int > 0)::int AS with_record,
          count(*) FILTER (WHERE last_up_at > ${now}::timestamptz - interval '24 hours')::int AS verifiable,
          avg(trust_score) AS avg_score
        FROM servers GROUP BY category ORDER BY category`;
    },

    async totals(now: Date) {
      const [row] = await sql<
        {
          servers: number;
          reports: number;
          reports_24h: number;
          probes_24h: number;
          avg_score: number | null;
          last_probe_at: Date | null;
          last_report_at: Date | null;
        }[]
      >`
        SELECT
          (SELECT count(*)::int FROM servers) AS servers,
          (SELECT count(*)::int FROM interaction_reports) AS reports,
          (SELECT count(*)::int FROM interaction_reports WHERE received_at > ${now}::timestamptz - interval '24 hours') AS reports_24h,
          (SELECT coalesce(sum(probes + inconclusive), 0)::int FROM rollups_hourly WHERE hour > ${now}::timestamptz - interval '24 hours') AS probes_24h,
          (SELECT avg(trust_score) FROM servers WHERE trust_score IS NOT NULL) AS avg_score,
          (SELECT max(last_probe_at) FROM servers) AS last_probe_at,
          (SELECT max(received_at) FROM interaction_reports) AS last_report_at`;
      return row!;
    },

    /** Per reporting agent: how much and when (the external-agents audit). */
    async agents(now: Date, limit: number) {
      const rows = await sql<
        {
          agent_id: string;
          row_count: number;
          rows_24h: number;
          first_seen: Date;
          last_seen: Date;
          first_tool_name: string | null;
          last_tool_name: string | null;
        }[]
      >`
        SELECT agent_id, count(*)::int AS row_count,
          count(*) FILTER (WHERE received_at > ${now}::timestamptz - interval '24 hours')::int AS rows_24h,
          min(received_at) AS first_seen, max(received_at) AS last_seen,
          (array_agg(tool_name ORDER BY received_at) FILTER (WHERE tool_name IS NOT NULL))[1] AS first_tool_name,
          (array_agg(tool_name ORDER BY received_at DESC) FILTER (WHERE tool_name IS NOT NULL))[1] AS last_tool_name
        FROM interaction_reports GROUP BY agent_id ORDER BY max(received_at) DESC LIMIT ${limit}`;
      const [totals] = await sql<
        { distinct_agents: number; total_rows: number; last_24h_distinct: number; last_24h_rows: number }[]
      >`
        SELECT count(DISTINCT agent_id)::int AS distinct_agents, count(*)::int AS total_rows,
          count(DISTINCT agent_id) FILTER (WHERE received_at > ${now}::timestamptz - interval '24 hours')::int AS last_24h_distinct,
          count(*) FILTER (WHERE received_at > ${now}::timestamptz - interval '24 hours')::int AS last_24h_rows
        FROM interaction_reports`;
      return { rows, totals: totals! };
    },
  };
}

export type DirectoryRepository = ReturnType<typeof directoryRepository>;
