import type { SqlOrTx } from '../client.ts';
import type { NewAuditEvent } from './audit.repository.ts';

/** An agent's report of one call (SPEC 2.5), as accepted by the API. */
export interface InteractionReportRecord {
  /** Minted at acceptance: what the agent is told, and how its report is found again. */
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

/**
 * A report is stored as its audit event, and only there: `interaction_reports` is a view that
 * reads these events back (migration 0005), so the payload keys below are the view's columns.
 */
export function reportAuditEvent(r: InteractionReportRecord): NewAuditEvent {
  return {
    event_id: `evt_${r.report_id.slice(4)}`,
    event_type: 'report',
    occurred_at: r.received_at,
    server_id: r.server_id,
    agent_id: r.agent_id,
    key_id: r.key_id,
    receipt_id: null,
    // keys in sorted order: the leaf's canonical JSON then needs no copy
    payload: {
      error_message: r.error_message,
      error_type: r.error_type,
      http_status: r.http_status,
      latency_ms: r.latency_ms,
      report_id: r.report_id,
      success: r.success,
      tool_name: r.tool_name,
    },
  };
}

/** Reads of the reports (the interaction_reports view of the audit log). */
export function interactionReportsRepository(sql: SqlOrTx) {
  return {
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
