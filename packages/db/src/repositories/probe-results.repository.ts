import { detectToolDrift, nextConsecutiveFailures, type ProbeResult } from '@observatory/core';
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

/**
 * How long a failing server waits before its next probe: one interval after the first failure,
 * then doubling, capped at an hour (or the interval, if that is longer).
 */
export function backoffSeconds(consecutiveFailures: number, intervalSeconds: number): number {
  if (consecutiveFailures <= 0) return intervalSeconds;
  // capped at an hour, or at the interval when that is longer
  return Math.min(
    Math.max(3600, intervalSeconds),
    intervalSeconds * 2 ** Math.min(consecutiveFailures - 1, 20),
  );
}

export function probeResultsRepository(sql: Sql) {
  return {
    /**
     * Stores a batch of results idempotently and, in the same transaction, folds the new ones
     * into each server's probe state (failure streak, backoff, last outcome, tool list),
     * records tool-list drift, and marks the touched hours for the analyzer. Rows already
     * stored (a retried job) are skipped and change nothing. Returns the probe ids that were new.
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
        const insertedIds = new Set(inserted.map((i) => i.probe_id));
        const fresh = records.filter((r) => insertedIds.has(r.probe_id));
        if (fresh.length === 0) return [];
        const ids = [...new Set(fresh.map((r) => r.server_id))];
        // Lock the servers' rows: two writers of the same server apply their batches in turn.
        // Every transaction that locks several servers rows does so in id order (no deadlock),
        // and NO KEY UPDATE leaves the foreign-key checks of concurrent inserts (reports,
        // probes, anomalies) unblocked.
        const current = await tx<ServerProbeState[]>`
          SELECT id, consecutive_failures, next_probe_at, tools_hash, tools FROM servers
          WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE`;
        const { updates, drift } = foldResults(current, fresh, opts.intervalSeconds);
        await tx`
          UPDATE servers s SET
            consecutive_failures = u.consecutive_failures,
            last_outcome = u.last_outcome,
            last_probe_at = u.last_probe_at,
            last_up_at = COALESCE(u.last_up_at, s.last_up_at),
            last_error = COALESCE(u.last_error, s.last_error),
            last_error_at = COALESCE(u.last_error_at, s.last_error_at),
            last_latency_ms = u.last_latency_ms,
            protocol_version = COALESCE(u.protocol_version, s.protocol_version),
            server_info = COALESCE(u.server_info, s.server_info),
            tools_hash = COALESCE(u.tools_hash, s.tools_hash),
            tools = COALESCE(u.tools, s.tools),
            next_probe_at = u.next_probe_at
          FROM jsonb_to_recordset(${tx.json(updates)}::jsonb) AS u(
            server_id bigint, consecutive_failures integer, last_outcome text, last_probe_at timestamptz,
            last_up_at timestamptz, last_error text, last_error_at timestamptz, last_latency_ms double precision,
            protocol_version text, server_info jsonb, tools_hash text, tools jsonb, next_probe_at timestamptz)
          WHERE s.id = u.server_id`;
        if (drift.length > 0) {
          await tx`INSERT INTO drift_events ${tx(drift, ['server_id', 'detected_at', 'old_hash', 'new_hash', 'added', 'removed', 'altered'])}`;
        }
        await tx`
          INSERT INTO rollup_dirty (server_id, hour)
          SELECT DISTINCT s, date_trunc('hour', h) FROM unnest(${fresh.map((r) => r.server_id)}::bigint[],
            ${fresh.map((r) => r.scheduled_at.toISOString())}::timestamptz[]) AS x(s, h)`;
        return fresh.map((r) => r.probe_id);
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
      const [row] = await sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM probe_results WHERE server_id = ${serverId}`;
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

interface ServerProbeState {
  id: number;
  consecutive_failures: number;
  next_probe_at: Date;
  tools_hash: string | null;
  tools: Array<{ name: string; hash: string }> | null;
}

// a type alias (not an interface) so it is assignable to postgres.js JSON values
type ServerStateUpdate = {
  server_id: number;
  consecutive_failures: number;
  last_outcome: string;
  last_probe_at: string;
  last_up_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  last_latency_ms: number;
  protocol_version: string | null;
  server_info: { name: string; version: string } | null;
  tools_hash: string | null;
  tools: Array<{ name: string; hash: string }> | null;
  next_probe_at: string;
};

interface DriftRow {
  server_id: number;
  detected_at: Date;
  old_hash: string | null;
  new_hash: string;
  added: string[];
  removed: string[];
  altered: string[];
}

/** Applies each server's new results in probe order to its stored state (pure). */
function foldResults(current: ServerProbeState[], fresh: ProbeResultRecord[], intervalSeconds: number) {
  const updates: ServerStateUpdate[] = [];
  const drift: DriftRow[] = [];
  for (const state of current) {
    const results = fresh
      .filter((r) => r.server_id === state.id)
      .map((r) => r.result)
      .sort((a, b) => a.started_at.getTime() - b.started_at.getTime());
    if (results.length === 0) continue;
    let failures = state.consecutive_failures;
    let toolsHash = state.tools_hash;
    let tools = state.tools;
    let lastUpAt: Date | null = null;
    let lastError: string | null = null;
    let lastErrorAt: Date | null = null;
    for (const r of results) {
      failures = nextConsecutiveFailures(failures, r.outcome);
      if (r.outcome === 'up' || r.outcome === 'degraded') lastUpAt = r.started_at;
      if (r.outcome !== 'up') {
        const kind = r.error_type ? `${r.outcome}/${r.error_type}` : r.outcome;
        lastError = r.error_message ? `${kind}: ${r.error_message}` : kind;
        lastErrorAt = r.started_at;
      }
      if (r.tools_hash && r.tools) {
        // the first tool list a server shows is its starting point, not drift
        const event = toolsHash
          ? detectToolDrift({ hash: toolsHash, tools }, { hash: r.tools_hash, tools: r.tools })
          : null;
        if (event) {
          drift.push({
            server_id: state.id,
            detected_at: r.started_at,
            old_hash: event.old_hash,
            new_hash: event.new_hash,
            added: event.added,
            removed: event.removed,
            altered: event.altered,
          });
        }
        toolsHash = r.tools_hash;
        tools = r.tools;
      }
    }
    const last = results[results.length - 1]!;
    // A failing server backs off: never probe it again sooner than its backoff says.
    const nextProbeAt =
      failures > 0
        ? new Date(
            Math.max(
              state.next_probe_at.getTime(),
              last.started_at.getTime() + backoffSeconds(failures, intervalSeconds) * 1000,
            ),
          )
        : state.next_probe_at;
    updates.push({
      server_id: state.id,
      consecutive_failures: failures,
      last_outcome: last.outcome,
      last_probe_at: last.started_at.toISOString(),
      last_up_at: lastUpAt?.toISOString() ?? null,
      last_error: lastError,
      last_error_at: lastErrorAt?.toISOString() ?? null,
      last_latency_ms: last.timings.total_ms,
      protocol_version: last.protocol_version,
      server_info: last.server_info,
      tools_hash: toolsHash,
      tools,
      next_probe_at: nextProbeAt.toISOString(),
    });
  }
  return { updates, drift };
}
