import { linearRegression } from 'simple-statistics';
import { TRUST_RULES, type TrustRules } from './trust-rules.ts';

/**
 * Per-day history of a server (get_server_history) and the trend of its trust score.
 *
 * `calls` counts every call we know of: our probes plus the agents' reported calls; `success_rate`
 * is over both, `uptime` over probes only. Days without data are present with zero calls and
 * null figures, so a chart shows the hole instead of hiding it.
 */

export interface DailyRollup {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Conclusive probes and how many were up (see probe-outcome-rules). */
  probes: number;
  probesUp: number;
  reports: number;
  reportSuccesses: number;
  /** Sum and count of the latencies behind avg_latency_ms (probes and reports alike). */
  latencySumMs: number;
  latencyCount: number;
  trustScore: number | null;
}

export interface HistoryDay {
  date: string;
  calls: number;
  probes: number;
  reports: number;
  success_rate: number | null;
  avg_latency_ms: number | null;
  uptime: number | null;
  trust_score: number | null;
}

export type Trend = 'improving' | 'stable' | 'declining' | 'insufficient_data';

const DAY_MS = 86_400_000;
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** YYYY-MM-DD of the UTC day holding `t`. */
export function utcDay(t: Date): string {
  return t.toISOString().slice(0, 10);
}

/**
 * Slope of a least-squares line through the daily scores (nulls skipped, x = day index):
 * improving / declining beyond ±trendSlopePerDay points a day, else stable; fewer than
 * trendMinDays scores → insufficient_data.
 */
export function scoreTrend(dailyScores: readonly (number | null)[], rules: TrustRules = TRUST_RULES): Trend {
  const points = dailyScores.flatMap((s, i) => (s === null ? [] : [[i, s]]));
  if (points.length < rules.history.trendMinDays) return 'insufficient_data';
  const { m } = linearRegression(points);
  if (m >= rules.history.trendSlopePerDay) return 'improving';
  if (m <= -rules.history.trendSlopePerDay) return 'declining';
  return 'stable';
}

/** The last `days` UTC days ending today, oldest first, and the score trend over them. */
export function buildHistory(
  rollups: readonly DailyRollup[],
  now: Date,
  days = 30,
  rules: TrustRules = TRUST_RULES,
): { days: HistoryDay[]; trend: Trend } {
  const byDay = new Map(rollups.map((r) => [r.day, r]));
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const rows: HistoryDay[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = utcDay(new Date(today - i * DAY_MS));
    const r = byDay.get(date);
    const calls = r ? r.probes + r.reports : 0;
    rows.push({
      date,
      calls,
      probes: r?.probes ?? 0,
      reports: r?.reports ?? 0,
      success_rate: r && calls > 0 ? round((r.probesUp + r.reportSuccesses) / calls, 4) : null,
      avg_latency_ms: r && r.latencyCount > 0 ? round(r.latencySumMs / r.latencyCount, 1) : null,
      uptime: r && r.probes > 0 ? round(r.probesUp / r.probes, 4) : null,
      trust_score: r?.trustScore ?? null,
    });
  }
  return {
    days: rows,
    trend: scoreTrend(
      rows.map((d) => d.trust_score),
      rules,
    ),
  };
}
