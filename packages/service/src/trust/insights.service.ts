import {
  buildHistory,
  type Category,
  histogramCount,
  normalizeCategory,
  TRUST_RULES,
} from '@observatory/core';
import type { Runtime } from '../runtime.ts';
import type { BaselinesCache } from './baselines-cache.ts';
import type { TrustService } from './trust.service.ts';

const DAY_MS = 86_400_000;

/** History, baselines and anomaly checks: the "how has it behaved" questions. */
export function insightsService(deps: { runtime: Runtime; trust: TrustService; baselines: BaselinesCache }) {
  const { runtime } = deps;

  return {
    /** Daily calls, success, latency, uptime and trust score; null when the server is untracked. */
    async history(identifier: string, days = 30) {
      const server = await deps.trust.find(identifier);
      if (!server) return null;
      const now = new Date();
      const from = new Date(now.getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
      const rows = await runtime.repos.rollups.daily([server.id], from, now.toISOString().slice(0, 10));
      const history = buildHistory(
        rows.map((r) => ({
          day: r.day,
          probes: r.probes,
          probesUp: r.ups,
          reports: r.reports,
          reportSuccesses: r.report_successes,
          latencySumMs: r.latency_sum_ms + r.report_latency_sum_ms,
          latencyCount: histogramCount(r.latency_hist) + r.report_latency_count,
          trustScore: r.trust_score,
        })),
        now,
        days,
      );
      return { server_url: server.url, name: server.name, days: history.days, trend: history.trend };
    },

    /** The stored baseline of a category, with the rules that judge against it. */
    async baselines(categoryName: string) {
      const category: Category = normalizeCategory(categoryName);
      const stored = (await runtime.repos.baselines.list()).find(
        (b) => normalizeCategory(b.category) === category,
      );
      const b = stored?.baseline;
      return {
        category,
        window_days: stored?.window_days ?? TRUST_RULES.baseline.categoryWindowDays,
        computed_at: stored?.computed_at.toISOString() ?? null,
        servers: b?.samples ?? 0,
        latency: b?.latency
          ? {
              samples: b.latency.samples,
              avg_latency_ms: Math.round(b.latency.mean_ms * 10) / 10,
              geometric_mean_ms: Math.round(b.latency.geo_mean_ms * 10) / 10,
              p50_ms: Math.round(b.latency.p50_ms * 10) / 10,
              p95_ms: Math.round(b.latency.p95_ms * 10) / 10,
              log_mean: b.latency.log_mean,
              log_stddev: b.latency.log_stddev,
            }
          : null,
        availability: b?.availability ?? null,
        success_rate: b?.success_rate ?? null,
        anomaly_rules: TRUST_RULES.anomaly,
        note: b ? undefined : 'No baseline yet: no server of this category has measurements in the window.',
      };
    },

    /** Open anomalies of a server against its own and its category baseline (z-scores). */
    async checkAnomaly(identifier: string) {
      const server = await deps.trust.find(identifier);
      if (!server) return null;
      const open = await runtime.repos.anomalies.openFor([server.id]);
      const recent = await runtime.repos.anomalies.recentFor(server.id, 10);
      const category = (await deps.baselines.get()).get(normalizeCategory(server.category)) ?? null;
      const worst = open.reduce<string | null>(
        (w, a) => (a.severity === 'high' || (a.severity === 'medium' && w !== 'high') || !w ? a.severity : w),
        null,
      );
      return {
        server_url: server.url,
        is_anomalous: open.length > 0,
        anomalies: open.map((a) => ({
          metric: a.metric,
          scope: a.scope,
          severity: a.severity,
          detail: a.detail,
          observed: a.observed,
          baseline_mean: a.baseline_mean,
          baseline_stddev: a.baseline_stddev,
          baseline_samples: a.baseline_samples,
          z: Math.round(a.z * 100) / 100,
          detected_at: a.detected_at.toISOString(),
        })),
        recently_cleared: recent
          .filter((a) => a.cleared_at)
          .map((a) => ({
            metric: a.metric,
            scope: a.scope,
            severity: a.severity,
            detected_at: a.detected_at.toISOString(),
            cleared_at: a.cleared_at!.toISOString(),
          })),
        server_baselines: {
          latency_24h: server.stats?.latency_24h ?? null,
          uptime_24h: server.stats?.uptime.uptime_24h ?? null,
          category: category
            ? {
                servers: category.samples,
                latency_geo_mean_ms: category.latency?.geo_mean_ms ?? null,
                availability_mean: category.availability?.mean ?? null,
              }
            : null,
          method: `z-scores against the server's own hourly baseline (${TRUST_RULES.baseline.selfWindowDays} days) and its category; open at |z| ≥ ${TRUST_RULES.anomaly.openZ}, clear below ${TRUST_RULES.anomaly.clearZ}`,
        },
        recommendation:
          open.length === 0
            ? 'No anomaly: behaviour is within its baselines.'
            : worst === 'high'
              ? 'Severe deviation: avoid this server or use a fallback until it clears.'
              : 'Deviation from baseline: expect degraded behaviour; retry with care.',
      };
    },
  };
}

export type InsightsService = ReturnType<typeof insightsService>;
