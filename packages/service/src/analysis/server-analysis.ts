import {
  aggregateWindow,
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
  type RollupCounts,
  TRUST_RULES,
  type UptimeWindows,
  uptimeWindows,
  type WindowAggregate,
} from '@observatory/core';
import { anomaliesRepository, type HourlyRollup, rollupsRepository, type SqlOrTx } from '@observatory/db';

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

const counts = (h: HourlyRollup): RollupCounts => ({
  probes: h.probes,
  probesUp: h.ups,
  reports: h.reports,
  reportSuccesses: h.report_successes,
  latencyHist: h.latency_hist,
});

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
  const selfDays = TRUST_RULES.baseline.selfWindowDays;
  const hourlyFrom = new Date(nextHour - Math.max(selfDays, TRUST_RULES.windows.reportDays) * DAY_MS);
  const today = now.toISOString().slice(0, 10);
  const monthAgo = new Date(now.getTime() - 29 * DAY_MS).toISOString().slice(0, 10);

  const [hourly, daily, recent, open] = await Promise.all([
    rollups.hourly(ids, hourlyFrom, new Date(nextHour)),
    rollups.daily(ids, monthAgo, today),
    tx<RecentProbe[]>`
      SELECT server_id, outcome, total_ms FROM (
        SELECT server_id, outcome, total_ms,
          row_number() OVER (PARTITION BY server_id ORDER BY scheduled_at DESC) AS rn
        FROM probe_results
        WHERE server_id = ANY(${ids}::bigint[]) AND scheduled_at > ${new Date(now.getTime() - 2 * DAY_MS)}
          AND scheduled_at <= ${now}
      ) r WHERE rn <= ${RECENT_PROBES} ORDER BY server_id, rn`,
    anomaliesRepository(tx).openFor(ids),
  ]);

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

  const probeFrom = nextHour - TRUST_RULES.windows.probeHours * HOUR_MS;
  const reportFrom = nextHour - TRUST_RULES.windows.reportDays * DAY_MS;
  const results: AnalyzedServer[] = [];
  const anomalies = anomaliesRepository(tx);

  for (const server of servers) {
    const hours = hourlyBy.get(server.id) ?? [];
    const days = dailyBy.get(server.id) ?? [];
    const probeHours = hours.filter((h) => h.hour.getTime() >= probeFrom);
    const reportHours = hours.filter((h) => h.hour.getTime() >= reportFrom);
    const latency24 = mergeHistograms(probeHours.map((h) => h.latency_hist));
    const latency7d = mergeHistograms(hours.map((h) => h.latency_hist));
    const sum = <T>(rows: T[], f: (r: T) => number) => rows.reduce((s, r) => s + f(r), 0);
    const probes24 = { total: sum(probeHours, (h) => h.probes), up: sum(probeHours, (h) => h.ups) };
    const reports7 = {
      total: sum(reportHours, (h) => h.reports),
      successes: sum(reportHours, (h) => h.report_successes),
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

    const reportLatencyCount = sum(reportHours, (h) => h.report_latency_count);
    const reports30 = { total: sum(days, (d) => d.reports), successes: sum(days, (d) => d.report_successes) };
    const stats: ServerStats = {
      computed_at: now.toISOString(),
      uptime: uptimeWindows({
        hourly: hours.map((h) => ({ start: h.hour, probes: h.probes, up: h.ups })),
        daily: days.map((d) => ({ start: new Date(`${d.day}T00:00:00Z`), probes: d.probes, up: d.ups })),
        now,
      }),
      latency_24h: latencySummary(latency24),
      latency_7d: latencySummary(latency7d),
      reports_7d: {
        ...reports7,
        success_rate:
          reports7.total > 0 ? Math.round((reports7.successes / reports7.total) * 10_000) / 10_000 : null,
        avg_latency_ms:
          reportLatencyCount > 0
            ? Math.round((sum(reportHours, (h) => h.report_latency_sum_ms) / reportLatencyCount) * 10) / 10
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
    const recentHour = hours.filter((h) => h.hour.getTime() >= nextHour - HOUR_MS);
    const recentWindow: WindowAggregate = {
      latencyMs: answering.length > 0 ? median(answering.map((p) => p.total_ms)) : null,
      latencySamples: answering.length,
      probes: conclusive.length,
      probesUp: conclusive.filter((p) => p.outcome === 'up' || p.outcome === 'degraded').length,
      reports: sum(recentHour, (h) => h.reports),
      reportSuccesses: sum(recentHour, (h) => h.report_successes),
    };
    const selfBaseline = computeBaseline(hours.map((h) => aggregateWindow([counts(h)])));
    const change = evaluateAnomalies(
      openBy.get(server.id) ?? [],
      recentWindow,
      { self: selfBaseline, category: categoryBaselines.get(normalizeCategory(server.category)) ?? null },
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
