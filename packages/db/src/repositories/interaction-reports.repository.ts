import type { SqlOrTx } from '../client.ts';

/** An agent's report of one call (SPEC 2.5), as accepted by the API. */
export interface InteractionReportRecord {
  /** Minted at acceptance; makes a re-written batch store each report once. */
  report_id: string;
  server_id: number;
  agent_id: string;
  key_id: number | null;
  received_at: Date;
  success: boolean;
  latency_ms: number | null;
  tool_name: string | null;
  error_type: string | null;
  error_message: string | null;
  http_status: number | null;
}

export interface StoredInteractionReport extends InteractionReportRecord {
  id: number;
}

export function interactionReportsRepository(sql: SqlOrTx) {
  return {
    /**
     * Stores a batch in one statement; reports already stored are skipped. Returns how many were
     * new. The batch goes in as one JSON parameter, so the statement text is the same for every
     * batch size: prepared once per connection, planned cheaply, and no per-value bind work.
     */
    async insertBatch(reports: InteractionReportRecord[]): Promise<number> {
      if (reports.length === 0) return 0;
      const result = await sql`
        INSERT INTO interaction_reports (report_id, server_id, agent_id, key_id, received_at, success,
                                         latency_ms, tool_name, error_type, error_message, http_status)
        SELECT report_id, server_id, agent_id, key_id, received_at, success, latency_ms, tool_name,
               error_type, error_message, http_status
        FROM json_to_recordset(${JSON.stringify(reports)}::text::json) AS x(report_id text, server_id bigint,
          agent_id text, key_id bigint, received_at timestamptz, success boolean,
          latency_ms double precision, tool_name text, error_type text, error_message text,
          http_status integer)
        ON CONFLICT (report_id) DO NOTHING`;
      return result.count;
    },

    async countForServer(serverId: number): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM interaction_reports WHERE server_id = ${serverId}`;
      return row?.n ?? 0;
    },

    async count(): Promise<number> {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM interaction_reports`;
      return row?.n ?? 0;
    },
  };
}

export type InteractionReportsRepository = ReturnType<typeof interactionReportsRepository>;
