import type { PendingQuery, Row } from 'postgres';
import type { SqlOrTx } from '../client.ts';

/**
 * Rollups are always RECOMPUTED from raw rows for the (server, hour) pairs that changed, never
 * incremented: a pass that runs twice, or a retried one, gives the same answer.
 *
 * Latency histograms use packages/core's fixed layout: bucket 0 is [0, 1) ms, bucket k is
 * [2^((k-1)/16), 2^(k/16)) ms, 309 is overflow, stored sparse as [bucket, count, …].
 * The bucket is computed here in SQL so a full pass over millions of rows never leaves the
 * database (packages/core latency-histogram.test checks the two agree).
 */
const BUCKET = (column: string) =>
  `CASE WHEN ${column} < 1 THEN 0 ELSE LEAST(floor(ln(${column}) / ln(2.0) * 16)::int + 1, 309) END`;

/** A recomputed rollup replaces every count of the stored one (hourly and daily alike). */
const REPLACE_COUNTS = [
  'probes',
  'ups',
  'degraded',
  'inconclusive',
  'latency_hist',
  'latency_sum_ms',
  'reports',
  'report_successes',
  'distinct_agents',
  'report_latency_hist',
  'report_latency_sum_ms',
  'report_latency_count',
]
  .map((c) => `${c} = EXCLUDED.${c}`)
  .join(', ');

const QUARTER_HOUR_MS = 15 * 60_000;

export interface DirtyMark {
  server_id: number;
  hour: Date;
}

export interface HourlyRollup {
  server_id: number;
  hour: Date;
  probes: number;
  ups: number;
  degraded: number;
  inconclusive: number;
  reports: number;
  report_successes: number;
  distinct_agents: number;
  latency_hist: number[];
  latency_sum_ms: number;
  report_latency_hist: number[];
  report_latency_sum_ms: number;
  report_latency_count: number;
}

export interface DailyRollup extends Omit<HourlyRollup, 'hour'> {
  day: string;
  trust_score: number | null;
}

export function rollupsRepository(sql: SqlOrTx) {
  /**
   * Recomputes rollups_hourly from probe_results and interaction_reports. `sources` is the head
   * of the WITH list defining t (the (server_id, hour) pairs to write), p (their probes: server_id,
   * hour, outcome, total_ms) and r (their reports: server_id, hour, success, latency_ms, agent_id).
   */
  async function recomputeHourlyFrom(sources: PendingQuery<Row[]>): Promise<number> {
    const result = await sql`
      WITH ${sources},
      pc AS (
        SELECT server_id, hour,
          count(*) FILTER (WHERE outcome <> 'auth_required')::int AS probes,
          count(*) FILTER (WHERE outcome IN ('up', 'degraded'))::int AS ups,
          count(*) FILTER (WHERE outcome = 'degraded')::int AS degraded,
          count(*) FILTER (WHERE outcome = 'auth_required')::int AS inconclusive,
          coalesce(sum(total_ms) FILTER (WHERE outcome IN ('up', 'degraded')), 0) AS latency_sum_ms
        FROM p GROUP BY server_id, hour
      ),
      pb AS (
        SELECT server_id, hour, ${sql.unsafe(BUCKET('total_ms'))} AS bucket, count(*)::int AS c
        FROM p WHERE outcome IN ('up', 'degraded') GROUP BY 1, 2, 3
      ),
      ph AS (
        SELECT server_id, hour, array_agg(kv.v ORDER BY bucket, kv.k) AS hist
        FROM pb, LATERAL (VALUES (0, bucket), (1, c)) AS kv(k, v) GROUP BY server_id, hour
      ),
      rc AS (
        SELECT server_id, hour, count(*)::int AS reports, count(*) FILTER (WHERE success)::int AS report_successes,
          count(DISTINCT agent_id)::int AS distinct_agents, coalesce(sum(latency_ms), 0) AS report_latency_sum_ms,
          count(latency_ms)::int AS report_latency_count
        FROM r GROUP BY server_id, hour
      ),
      rb AS (
        SELECT server_id, hour, ${sql.unsafe(BUCKET('latency_ms'))} AS bucket, count(*)::int AS c
        FROM r WHERE latency_ms IS NOT NULL GROUP BY 1, 2, 3
      ),
      rh AS (
        SELECT server_id, hour, array_agg(kv.v ORDER BY bucket, kv.k) AS hist
        FROM rb, LATERAL (VALUES (0, bucket), (1, c)) AS kv(k, v) GROUP BY server_id, hour
      )
      INSERT INTO rollups_hourly AS h (server_id, hour, probes, ups, degraded, inconclusive, latency_hist, latency_sum_ms,
        reports, report_successes, distinct_agents, report_latency_hist, report_latency_sum_ms, report_latency_count)
      SELECT t.server_id, t.hour, coalesce(pc.probes, 0), coalesce(pc.ups, 0), coalesce(pc.degraded, 0),
        coalesce(pc.inconclusive, 0), coalesce(ph.hist, '{}'), coalesce(pc.latency_sum_ms, 0),
        coalesce(rc.reports, 0), coalesce(rc.report_successes, 0), coalesce(rc.distinct_agents, 0),
        coalesce(rh.hist, '{}'), coalesce(rc.report_latency_sum_ms, 0), coalesce(rc.report_latency_count, 0)
      FROM t
        LEFT JOIN pc ON pc.server_id = t.server_id AND pc.hour = t.hour
        LEFT JOIN ph ON ph.server_id = t.server_id AND ph.hour = t.hour
        LEFT JOIN rc ON rc.server_id = t.server_id AND rc.hour = t.hour
        LEFT JOIN rh ON rh.server_id = t.server_id AND rh.hour = t.hour
      ON CONFLICT (server_id, hour) DO UPDATE SET ${sql.unsafe(REPLACE_COUNTS)}`;
    return result.count;
  }

  /**
   * Recomputes rollups_daily from rollups_hourly, merging histograms. `hours` selects the hourly
   * rows to fold (all columns plus `day`), whole days of them.
   */
  async function recomputeDailyFrom(hours: PendingQuery<Row[]>): Promise<number> {
    const result = await sql`
      WITH h AS (${hours}),
      c AS (
        SELECT server_id, day, sum(probes)::int AS probes, sum(ups)::int AS ups, sum(degraded)::int AS degraded,
          sum(inconclusive)::int AS inconclusive, sum(latency_sum_ms) AS latency_sum_ms, sum(reports)::int AS reports,
          sum(report_successes)::int AS report_successes, max(distinct_agents)::int AS distinct_agents,
          sum(report_latency_sum_ms) AS report_latency_sum_ms, sum(report_latency_count)::int AS report_latency_count
        FROM h GROUP BY server_id, day
      ),
      lb AS (
        SELECT server_id, day, latency_hist[2 * i - 1] AS bucket, sum(latency_hist[2 * i])::int AS n
        FROM h, generate_series(1, coalesce(array_length(latency_hist, 1), 0) / 2) AS i GROUP BY 1, 2, 3
      ),
      lh AS (
        SELECT server_id, day, array_agg(kv.v ORDER BY bucket, kv.k) AS hist
        FROM lb, LATERAL (VALUES (0, bucket), (1, n)) AS kv(k, v) GROUP BY server_id, day
      ),
      rb AS (
        SELECT server_id, day, report_latency_hist[2 * i - 1] AS bucket, sum(report_latency_hist[2 * i])::int AS n
        FROM h, generate_series(1, coalesce(array_length(report_latency_hist, 1), 0) / 2) AS i GROUP BY 1, 2, 3
      ),
      rh AS (
        SELECT server_id, day, array_agg(kv.v ORDER BY bucket, kv.k) AS hist
        FROM rb, LATERAL (VALUES (0, bucket), (1, n)) AS kv(k, v) GROUP BY server_id, day
      )
      INSERT INTO rollups_daily AS d (server_id, day, probes, ups, degraded, inconclusive, latency_hist, latency_sum_ms,
        reports, report_successes, distinct_agents, report_latency_hist, report_latency_sum_ms, report_latency_count)
      SELECT c.server_id, c.day, c.probes, c.ups, c.degraded, c.inconclusive, coalesce(lh.hist, '{}'), c.latency_sum_ms,
        c.reports, c.report_successes, c.distinct_agents, coalesce(rh.hist, '{}'), c.report_latency_sum_ms, c.report_latency_count
      FROM c
        LEFT JOIN lh ON lh.server_id = c.server_id AND lh.day = c.day
        LEFT JOIN rh ON rh.server_id = c.server_id AND rh.day = c.day
      ON CONFLICT (server_id, day) DO UPDATE SET ${sql.unsafe(REPLACE_COUNTS)}`;
    return result.count;
  }

  return {
    /**
     * Takes up to `limit` dirty marks (deleting them), oldest first. Call inside the transaction
     * that recomputes them: if it rolls back, the marks come back. SKIP LOCKED lets several
     * analyzers share the work. The queue is append-only (writers never wait on it), so the
     * same (server, hour) may come back more than once: `taken` counts rows, `marks` is deduped.
     */
    async takeDirty(limit: number): Promise<{ taken: number; marks: DirtyMark[] }> {
      const rows = await sql<DirtyMark[]>`
        DELETE FROM rollup_dirty WHERE id IN (
          SELECT id FROM rollup_dirty ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING server_id, hour`;
      const unique = new Map<string, DirtyMark>();
      for (const m of rows) unique.set(`${m.server_id}|${m.hour.getTime()}`, m);
      return { taken: rows.length, marks: [...unique.values()] };
    },

    /**
     * Marks (server, hour) pairs for the analyzer. Append-only: never waits on other writers.
     * A batch of reports mostly names a few servers in one hour: one time per server and
     * quarter hour is sent (formatted once, not once per report), and the database truncates
     * them to hours in its session's time zone, as the rollups do — every zone's offset is a
     * whole number of quarter hours, so no hour is left out.
     */
    markDirty(marks: DirtyMark[]): Promise<void> {
      if (marks.length === 0) return Promise.resolve();
      const servers: number[] = [];
      const times: string[] = [];
      const seen = new Set<string>();
      for (const m of marks) {
        const key = `${m.server_id}|${Math.floor(m.hour.getTime() / QUARTER_HOUR_MS)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        servers.push(m.server_id);
        times.push(m.hour.toISOString());
      }
      // sent now (not when awaited): in a pipelined transaction statements go out in the order
      // they are made, so a caller can put the audit append, which takes the log's lock, last
      return sql`
        INSERT INTO rollup_dirty (server_id, hour)
        SELECT DISTINCT s, date_trunc('hour', h) FROM unnest(${servers}::bigint[], ${times}::timestamptz[]) AS x(s, h)`
        .execute()
        .then(() => {});
    },

    async dirtyCount(): Promise<number> {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_dirty`;
      return row?.n ?? 0;
    },

    /** Recomputes hourly, then daily rollups for these marks. */
    async recompute(marks: DirtyMark[]): Promise<void> {
      if (marks.length === 0) return;
      const ids = marks.map((m) => m.server_id);
      const hours = marks.map((m) => m.hour.toISOString());
      await recomputeHourlyFrom(sql`
        t AS (
          SELECT DISTINCT server_id, date_trunc('hour', hour) AS hour
          FROM unnest(${ids}::bigint[], ${hours}::timestamptz[]) AS x(server_id, hour)
        ),
        p AS (
          SELECT t.server_id, t.hour, r.outcome, r.total_ms
          FROM t JOIN probe_results r
            ON r.server_id = t.server_id AND r.scheduled_at >= t.hour AND r.scheduled_at < t.hour + interval '1 hour'
        ),
        -- Looked up hour by hour on the log's (server, time) index. As a plain join the planner
        -- cannot see how narrow each hour is and, on a large log, scanned all of it (398 ms
        -- instead of 16 ms for 60 hours of a 1M-event log); OFFSET 0 keeps each lookup a lookup.
        r AS (
          SELECT t.server_id, t.hour, ir.success, ir.latency_ms, ir.agent_id
          FROM t CROSS JOIN LATERAL (
            SELECT success, latency_ms, agent_id FROM interaction_reports
            WHERE server_id = t.server_id AND received_at >= t.hour AND received_at < t.hour + interval '1 hour'
            OFFSET 0) ir
        )`);
      await recomputeDailyFrom(sql`
        WITH d AS (
          SELECT DISTINCT server_id, (hour AT TIME ZONE 'UTC')::date AS day
          FROM unnest(${ids}::bigint[], ${hours}::timestamptz[]) AS x(server_id, hour)
        )
        SELECT h.*, d.day FROM d JOIN rollups_hourly h
          ON h.server_id = d.server_id AND h.hour >= d.day::timestamp AT TIME ZONE 'UTC'
          AND h.hour < (d.day + 1)::timestamp AT TIME ZONE 'UTC'`);
    },

    /**
     * Recomputes every server's rollups for one UTC day, by scanning that day's raw rows (one
     * probe partition) rather than looking hours up one by one. The full pass runs this per day.
     */
    async recomputeDay(day: string): Promise<{ hours: number; days: number }> {
      const from = new Date(`${day}T00:00:00.000Z`);
      const to = new Date(from.getTime() + 86_400_000);
      const hours = await recomputeHourlyFrom(sql`
        p AS (
          SELECT server_id, date_trunc('hour', scheduled_at) AS hour, outcome, total_ms FROM probe_results
          WHERE scheduled_at >= ${from} AND scheduled_at < ${to}
        ),
        r AS (
          SELECT server_id, date_trunc('hour', received_at) AS hour, success, latency_ms, agent_id
          FROM interaction_reports WHERE received_at >= ${from} AND received_at < ${to}
        ),
        t AS (SELECT DISTINCT server_id, hour FROM p UNION SELECT DISTINCT server_id, hour FROM r)`);
      const days = await recomputeDailyFrom(sql`
        SELECT h.*, ${day}::date AS day FROM rollups_hourly h WHERE h.hour >= ${from} AND h.hour < ${to}`);
      return { hours, days };
    },

    async hourly(serverIds: number[], from: Date, to: Date): Promise<HourlyRollup[]> {
      if (serverIds.length === 0) return [];
      return sql<HourlyRollup[]>`
        SELECT * FROM rollups_hourly
        WHERE server_id = ANY(${serverIds}::bigint[]) AND hour >= ${from} AND hour < ${to}
        ORDER BY server_id, hour`;
    },

    /**
     * Daily rows. With `histogramsFrom`, histograms come back only for days from then on (empty
     * before, and report histograms never): parsing integer arrays is most of the cost of a
     * month of rows, and the analyzer needs latency histograms for one week only.
     */
    async daily(
      serverIds: number[],
      fromDay: string,
      toDay: string,
      opts: { histogramsFrom?: string } = {},
    ): Promise<DailyRollup[]> {
      if (serverIds.length === 0) return [];
      const trimmed = opts.histogramsFrom !== undefined;
      return sql<DailyRollup[]>`
        SELECT server_id, to_char(day, 'YYYY-MM-DD') AS day, probes, ups, degraded, inconclusive, reports,
          report_successes, distinct_agents,
          ${trimmed ? sql`CASE WHEN day >= ${opts.histogramsFrom ?? null}::date THEN latency_hist ELSE '{}' END` : sql`latency_hist`} AS latency_hist,
          latency_sum_ms,
          ${trimmed ? sql`'{}'::integer[]` : sql`report_latency_hist`} AS report_latency_hist,
          report_latency_sum_ms, report_latency_count, trust_score
        FROM rollups_daily
        WHERE server_id = ANY(${serverIds}::bigint[]) AND day >= ${fromDay}::date AND day <= ${toDay}::date
        ORDER BY server_id, day`;
    },
  };
}

export type RollupsRepository = ReturnType<typeof rollupsRepository>;
