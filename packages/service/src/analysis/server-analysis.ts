import {
  type Baseline,
  type Category,
  computeBaseline,
  evaluateAnomalies,
  histogramCount,
  histogramMean,
  histogramQuantile,
  type LatencyHistogram,
  mergeHistograms,
  normalizeCategory,
  TRUST_RULES,
  type UptimeWindows,
  uptimeBetween,
  type WindowAggregate,
} from '@observatory/core';
import {
  anomaliesRepository,
  type DailyRollup,
  type HourlyRollup,
  rollupsRepository,
  type SqlOrTx,
} from '@observatory/db';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The recent window anomalies judge: the last N probes (rates) … */
const RECENT_PROBES = 12;
/** … and the last N answering probes (latency): 2 slow of 3 moves the median at once. */
const RECENT_LATENCY_PROBES = 3;

/** The windowed figures the trust formula needs, as of `window_end` (stored in servers.trust_inputs). */
export interface TrustInputsSnapshot {
  window_end: string;
  probes: { total: number; up: number };
  reports: { total: number; successes: number };
  latency: { p50Ms: number; p95Ms: number | null; samples: number } | null;
}

export interface LatencySummary {
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  mean_ms: number | null;
  samples: number;
}

/** What status pages and listings show (stored in servers.stats). */
export interface ServerStats {
  computed_at: string;
  uptime: UptimeWindows;
  latency_24h: LatencySummary;
  latency_7d: LatencySummary;
  reports_7d: {
    total: number;
    successes: number;
    success_rate: number | null;
    avg_latency_ms: number | null;
  };
  reports_30d: { total: number; successes: number; success_rate: number | null };
  distinct_agents_30d: number;
}

function latencySummary(hist: LatencyHistogram): LatencySummary {
  const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
  return {
    p50_ms: round(histogramQuantile(hist, 0.5)),
    p95_ms: round(histogramQuantile(hist, 0.95)),
    p99_ms: round(histogramQuantile(hist, 0.99)),
    mean_ms: round(histogramMean(hist)),
    samples: histogramCount(hist),
  };
}

interface RecentProbe {
  server_id: number;
  outcome: string;
  total_ms: number;
}

export interface AnalyzedServer {
  server_id: number;
  trust_inputs: TrustInputsSnapshot;
  stats: ServerStats;
  opened: number;
  cleared: number;
}

/**
 * Re-derives, for each given server, its trust inputs, its stats and its anomalies from the
 * rollups (and its last few raw probes), inside the caller's transaction.
 */
export async function analyzeServers(
  tx: SqlOrTx,
  servers: Array<{ id: number; category: string }>,
  categoryBaselines: Map<Category, Baseline>,
  now: Date,
): Promise<AnalyzedServer[]> {
  if (servers.length === 0) return [];
  const ids = servers.map((s) => s.id);
  const rollups = rollupsRepository(tx);
  const nextHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  const today = now.toISOString().slice(0, 10);
  const monthAgo = new Date(now.getTime() - 29 * DAY_MS).toISOString().slice(0, 10);
  const weekAgo = new Date(now.getTime() - 6 * DAY_MS).toISOString().slice(0, 10);

  // Hourly rows only for the probe window; longer windows come from the daily rollups, and the
  // server's own baseline (7 days of hourly windows) is cached and refreshed hourly.
  const [hourly, daily, recent, open, cached] = await Promise.all([
    rollups.hourly(ids, new Date(nextHour - TRUST_RULES.windows.probeHours * HOUR_MS), new Date(nextHour)),
    rollups.daily(ids, monthAgo, today, { histogramsFrom: weekAgo }),
    // the last few probes of each server, newest first: one index range scan per server
    tx<RecentProbe[]>`
      SELECT s.id AS server_id, p.outcome, p.total_ms
      FROM unnest(${ids}::bigint[]) AS s(id),
      LATERAL (
        SELECT outcome, total_ms FROM probe_results
        WHERE server_id = s.id AND scheduled_at > ${new Date(now.getTime() - 2 * DAY_MS)} AND scheduled_at <= ${now}
        ORDER BY scheduled_at DESC LIMIT ${RECENT_PROBES}
      ) p`,
    anomaliesRepository(tx).openFor(ids),
    tx<{ id: number; self_baseline: Baseline | null; self_baseline_at: Date | null }[]>`
      SELECT id, self_baseline, self_baseline_at FROM servers WHERE id = ANY(${ids}::bigint[])`,
  ]);
  const selfBaselines = await refreshSelfBaselines(tx, cached, now);

  const group = <T extends { server_id: number }>(rows: T[]) => {
    const m = new Map<number, T[]>();
    for (const r of rows) {
      const list = m.get(r.server_id) ?? [];
      list.push(r);
      m.set(r.server_id, list);
    }
    return m;
  };
  const hourlyBy = group(hourly);
  const dailyBy = group(daily);
  const recentBy = group(recent);
  const openBy = group(open);

  const nextDay = Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAY_MS;
  const reportFrom = nextDay - TRUST_RULES.windows.reportDays * DAY_MS;
  const results: AnalyzedServer[] = [];
  const anomalies = anomaliesRepository(tx);

  for (const server of servers) {
    const probeHours = hourlyBy.get(server.id) ?? [];
    const days = dailyBy.get(server.id) ?? [];
    const dayStart = (d: { day: string }) => Date.parse(`${d.day}T00:00:00Z`);
    // reports: the last reportDays UTC days, today included
    const reportDays = days.filter((d) => dayStart(d) >= reportFrom);
    const weekDays = days.filter((d) => dayStart(d) >= nextDay - 7 * DAY_MS);
    const latency24 = mergeHistograms(probeHours.map((h) => h.latency_hist));
    const latency7d = mergeHistograms(weekDays.map((d) => d.latency_hist));
    const sum = <T>(rows: T[], f: (r: T) => number) => rows.reduce((s, r) => s + f(r), 0);
    const probes24 = { total: sum(probeHours, (h) => h.probes), up: sum(probeHours, (h) => h.ups) };
    const reports7 = {
      total: sum(reportDays, (d) => d.reports),
      successes: sum(reportDays, (d) => d.report_successes),
    };
    const latencySamples = histogramCount(latency24);

    const trust_inputs: TrustInputsSnapshot = {
      window_end: new Date(nextHour).toISOString(),
      probes: probes24,
      reports: reports7,
      latency:
        latencySamples > 0
          ? {
              p50Ms: histogramQuantile(latency24, 0.5)!,
              p95Ms: histogramQuantile(latency24, 0.95),
              samples: latencySamples,
            }
          : null,
    };

    const reportLatencyCount = sum(reportDays, (d) => d.report_latency_count);
    const reports30 = { total: sum(days, (d) => d.reports), successes: sum(days, (d) => d.report_successes) };
    const stats: ServerStats = {
      computed_at: now.toISOString(),
      uptime: uptimeFor(probeHours, days, nextHour, nextDay),
      latency_24h: latencySummary(latency24),
      latency_7d: latencySummary(latency7d),
      reports_7d: {
        ...reports7,
        success_rate:
          reports7.total > 0 ? Math.round((reports7.successes / reports7.total) * 10_000) / 10_000 : null,
        avg_latency_ms:
          reportLatencyCount > 0
            ? Math.round((sum(reportDays, (d) => d.report_latency_sum_ms) / reportLatencyCount) * 10) / 10
            : null,
      },
      reports_30d: {
        ...reports30,
        success_rate:
          reports30.total > 0 ? Math.round((reports30.successes / reports30.total) * 10_000) / 10_000 : null,
      },
      distinct_agents_30d: days.reduce((m, d) => Math.max(m, d.distinct_agents), 0),
    };

    // Anomalies: the recent window against the server's own hourly history and its category.
    const lastProbes = recentBy.get(server.id) ?? [];
    const conclusive = lastProbes.filter((p) => p.outcome !== 'auth_required');
    const answering = lastProbes
      .filter((p) => p.outcome === 'up' || p.outcome === 'degraded')
      .slice(0, RECENT_LATENCY_PROBES);
    const recentHour = probeHours.filter((h) => h.hour.getTime() >= nextHour - HOUR_MS);
    const recentWindow: WindowAggregate = {
      latencyMs: answering.length > 0 ? median(answering.map((p) => p.total_ms)) : null,
      latencySamples: answering.length,
      probes: conclusive.length,
      probesUp: conclusive.filter((p) => p.outcome === 'up' || p.outcome === 'degraded').length,
      reports: sum(recentHour, (h) => h.reports),
      reportSuccesses: sum(recentHour, (h) => h.report_successes),
    };
    const change = evaluateAnomalies(
      openBy.get(server.id) ?? [],
      recentWindow,
      {
        self: selfBaselines.get(server.id) ?? null,
        category: categoryBaselines.get(normalizeCategory(server.category)) ?? null,
      },
      now,
    );
    await anomalies.apply(server.id, change);
    results.push({
      server_id: server.id,
      trust_inputs,
      stats,
      opened: change.opened.length,
      cleared: change.cleared.length,
    });
  }
  return results;
}

/**
 * Uptime over the last 24 hours (hourly rollups) and the last 7 and 30 UTC days, today
 * included (daily rollups).
 */
function uptimeFor(
  hours: HourlyRollup[],
  days: DailyRollup[],
  nextHour: number,
  nextDay: number,
): UptimeWindows {
  const daily = days.map((d) => ({ start: new Date(`${d.day}T00:00:00Z`), probes: d.probes, up: d.ups }));
  return {
    uptime_24h: uptimeBetween(
      hours.map((h) => ({ start: h.hour, probes: h.probes, up: h.ups })),
      new Date(nextHour - 24 * HOUR_MS),
      new Date(nextHour),
    ),
    uptime_7d: uptimeBetween(daily, new Date(nextDay - 7 * DAY_MS), new Date(nextDay)),
    uptime_30d: uptimeBetween(daily, new Date(nextDay - 30 * DAY_MS), new Date(nextDay)),
  };
}

/** One hour as a baseline window (no merging needed: it is a single histogram). */
function hourWindow(h: HourlyRollup): WindowAggregate {
  return {
    latencyMs: histogramQuantile(h.latency_hist, 0.5),
    latencySamples: histogramCount(h.latency_hist),
    probes: h.probes,
    probesUp: h.ups,
    reports: h.reports,
    reportSuccesses: h.report_successes,
  };
}

/**
 * The servers' own baselines (their hourly windows over selfWindowDays). Recomputing them
 * means reading a week of hourly rows per server, so it is done at most hourly per server and
 * kept in servers.self_baseline.
 */
async function refreshSelfBaselines(
  tx: SqlOrTx,
  cached: Array<{ id: number; self_baseline: Baseline | null; self_baseline_at: Date | null }>,
  now: Date,
): Promise<Map<number, Baseline>> {
  const out = new Map<number, Baseline>();
  const stale: number[] = [];
  for (const c of cached) {
    if (c.self_baseline && c.self_baseline_at && now.getTime() - c.self_baseline_at.getTime() < HOUR_MS) {
      out.set(c.id, c.self_baseline);
    } else {
      stale.push(c.id);
    }
  }
  if (stale.length === 0) return out;
  const nextHour = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  const rows = await rollupsRepository(tx).hourly(
    stale,
    new Date(nextHour - TRUST_RULES.baseline.selfWindowDays * DAY_MS),
    new Date(nextHour),
  );
  const byServer = new Map<number, HourlyRollup[]>();
  for (const r of rows) byServer.set(r.server_id, [...(byServer.get(r.server_id) ?? []), r]);
  const updates = stale.map((id) => {
    const baseline = computeBaseline((byServer.get(id) ?? []).map(hourWindow));
    out.set(id, baseline);
    return { id, baseline };
  });
  await tx`
    UPDATE servers s SET self_baseline = u.baseline, self_baseline_at = ${now}
    FROM jsonb_to_recordset(${tx.json(updates as never)}::jsonb) AS u(id bigint, baseline jsonb)
    WHERE s.id = u.id`;
  return out;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
