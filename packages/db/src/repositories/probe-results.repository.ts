import type { ProbeResult } from '@observatory/core';
import type { Sql } from '../client.ts';

/** A probe result as the worker hands it over for storage. */
export interface ProbeResultRecord {
  /** Idempotency key: the same job (server + slot) always carries the same probe_id. */
  probe_id: string;
  server_id: number;
  /** The slot the probe was scheduled for (partition key, deterministic per job). */
  scheduled_at: Date;
  result: ProbeResult;
}

export interface StoredProbeResult {
  probe_id: string;
  server_id: number;
  scheduled_at: Date;
  started_at: Date;
  outcome: ProbeResult['outcome'];
  error_type: string | null;
  error_message: string | null;
  http_status: number | null;
  total_ms: number;
  tool_count: number | null;
  tools_hash: string | null;
}

/** Outcomes that count as "a working MCP server answered". */
const GOOD = new Set(['up', 'degraded']);

/**
 * How long a failing server waits before its next probe: one interval after the first failure,
 * then doubling, capped at an hour (or the interval, if that is longer).
 */
export function backoffSeconds(consecutiveFailures: number, intervalSeconds: number): number {
  if (consecutiveFailures <= 0) return intervalSeconds;
  return Math.min(backoffCapSeconds(intervalSeconds), intervalSeconds * 2 ** Math.min(consecutiveFailures - 1, 20));
}

export function probeResultsRepository(sql: Sql) {
  return {
    /**
     * Stores a batch of results idempotently and folds the new ones into each server's probe
     * state, in one transaction. Rows already stored (a retried job) are skipped and do not
     * touch server state again. Returns the probe ids that were new.
     */
    async insertBatch(records: ProbeResultRecord[], opts: { intervalSeconds: number }): Promise<string[]> {
      if (records.length === 0) return [];
      const rows = records.map(({ probe_id, server_id, scheduled_at, result: r }) => ({
        probe_id,
        scheduled_at,
        server_id,
        started_at: r.started_at,
        outcome: r.outcome,
        error_type: r.error_type,
        error_message: r.error_message,
        http_status: r.http_status,
        transport: r.transport,
        connect_ms: r.timings.connect_ms,
        initialize_ms: r.timings.initialize_ms,
        ping_ms: r.timings.ping_ms,
        tools_list_ms: r.timings.tools_list_ms,
        total_ms: r.timings.total_ms,
        protocol_version: r.protocol_version,
        server_info: r.server_info ? sql.json(r.server_info) : null,
        tool_count: r.tool_count,
        tools_hash: r.tools_hash,
      }));
      return sql.begin(async (tx) => {
        const inserted = await tx<{ probe_id: string }[]>`
          INSERT INTO probe_results ${tx(rows)}
          ON CONFLICT (probe_id, scheduled_at) DO NOTHING
          RETURNING probe_id`;
        const fresh = new Set(inserted.map((r) => r.probe_id));
        const updates = serverStateUpdates(records.filter((r) => fresh.has(r.probe_id)));
        if (updates.length > 0) {
          // One statement for the whole batch. On the right-hand side s.* are the values before
          // this update, so the backoff sees the failures stored before this batch.
          await tx`
            UPDATE servers s SET
              consecutive_failures = CASE WHEN u.any_good THEN u.trailing_failures ELSE s.consecutive_failures + u.trailing_failures END,
              last_outcome = u.last_outcome,
              last_probe_at = u.last_started_at,
              last_up_at = COALESCE(u.last_up_at, s.last_up_at),
              last_error = COALESCE(u.last_error, s.last_error),
              last_error_at = COALESCE(u.last_error_at, s.last_error_at),
              last_latency_ms = u.last_latency_ms,
              protocol_version = COALESCE(u.protocol_version, s.protocol_version),
              server_info = COALESCE(u.server_info, s.server_info),
              next_probe_at = CASE WHEN u.trailing_failures = 0 THEN s.next_probe_at ELSE GREATEST(
                s.next_probe_at,
                u.last_started_at + make_interval(secs => LEAST(
                  ${backoffCapSeconds(opts.intervalSeconds)}::double precision,
                  ${opts.intervalSeconds}::double precision * power(2, LEAST(20,
                    (CASE WHEN u.any_good THEN 0 ELSE s.consecutive_failures END) + u.trailing_failures - 1)))))
              END
            FROM jsonb_to_recordset(${tx.json(updates)}::jsonb) AS u(
              server_id bigint, any_good boolean, trailing_failures integer, last_outcome text,
              last_started_at timestamptz, last_up_at timestamptz, last_error text,
              last_error_at timestamptz, last_latency_ms double precision, protocol_version text,
              server_info jsonb)
            WHERE s.id = u.server_id`;
        }
        return [...fresh];
      });
    },

    async latestForServer(serverId: number, limit = 20): Promise<StoredProbeResult[]> {
      return sql<StoredProbeResult[]>`
        SELECT probe_id, server_id, scheduled_at, started_at, outcome, error_type, error_message,
               http_status, total_ms, tool_count, tools_hash
        FROM probe_results WHERE server_id = ${serverId}
        ORDER BY scheduled_at DESC LIMIT ${limit}`;
    },

    async countForServer(serverId: number): Promise<number> {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM probe_results WHERE server_id = ${serverId}`;
      return row?.n ?? 0;
    },

    /** Creates the daily partitions covering [from, to] (UTC days). */
    async ensurePartitions(from: Date, to: Date): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        SELECT ensure_probe_partitions(${from.toISOString().slice(0, 10)}::date, ${to.toISOString().slice(0, 10)}::date) AS n`;
      return row?.n ?? 0;
    },

    /** Drops raw partitions older than the retention window; rollups stay. */
    async dropPartitionsBefore(day: Date): Promise<number> {
      const [row] = await sql<{ n: number }[]>`
        SELECT drop_probe_partitions_before(${day.toISOString().slice(0, 10)}::date) AS n`;
      return row?.n ?? 0;
    },
  };
}

// a type alias (not an interface) so it is assignable to postgres.js JSON values
type ServerStateUpdate = {
  server_id: number;
  any_good: boolean;
  trailing_failures: number;
  last_outcome: string;
  last_started_at: string;
  last_up_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_latency_ms: number;
  protocol_version: string | null;
  server_info: { name: string; version: string } | null;
};

function backoffCapSeconds(intervalSeconds: number): number {
  return Math.max(3600, intervalSeconds);
}

/** Reduces a batch to one state change per server, in probe order. */
function serverStateUpdates(records: ProbeResultRecord[]): ServerStateUpdate[] {
  const byServer = new Map<number, ProbeResult[]>();
  for (const r of records) {
    const list = byServer.get(r.server_id) ?? [];
    list.push(r.result);
    byServer.set(r.server_id, list);
  }
  const updates: ServerStateUpdate[] = [];
  for (const [serverId, results] of byServer) {
    results.sort((a, b) => a.started_at.getTime() - b.started_at.getTime());
    let trailing = 0;
    let anyGood = false;
    let lastUpAt: Date | null = null;
    let lastError: string | null = null;
    let lastErrorAt: Date | null = null;
    for (const r of results) {
      if (GOOD.has(r.outcome)) {
        anyGood = true;
        trailing = 0;
        if (r.outcome === 'up') lastUpAt = r.started_at;
      } else {
        trailing += 1;
      }
      if (r.outcome !== 'up') {
        const kind = r.error_type ? `${r.outcome}/${r.error_type}` : r.outcome;
        lastError = r.error_message ? `${kind}: ${r.error_message}` : kind;
        lastErrorAt = r.started_at;
      }
    }
    const last = results[results.length - 1]!;
    updates.push({
      server_id: serverId,
      any_good: anyGood,
      trailing_failures: trailing,
      last_outcome: last.outcome,
      last_started_at: last.started_at.toISOString(),
      last_up_at: lastUpAt?.toISOString() ?? null,
      last_error: lastError,
      last_error_at: lastErrorAt?.toISOString() ?? null,
      last_latency_ms: last.timings.total_ms,
      protocol_version: last.protocol_version,
      server_info: last.server_info,
    });
  }
  return updates;
}
