import { mean, quantile, sampleStandardDeviation } from 'simple-statistics';
import type { Category } from './categories.ts';
import { CATEGORIES } from './categories.ts';
import type { LatencyHistogram } from './latency-histogram.ts';
import { histogramCount, histogramQuantile, mergeHistograms } from './latency-histogram.ts';
import { TRUST_RULES, type TrustRules } from './trust-rules.ts';

/**
 * Behavioural baselines: what "normal" looks like, as mean and spread over a set of windows.
 * The same computation serves two yardsticks:
 * - a category baseline: one window per server of the category (its aggregate over the last
 *   `categoryWindowDays`), i.e. how servers of this kind usually behave;
 * - a server's own baseline: its hourly windows over the last `selfWindowDays`.
 *
 * Latency is summarised on ln(ms): latencies are roughly log-normal (a long right tail, a hard
 * floor at zero), so the arithmetic mean and stddev are dominated by a few slow windows and a
 * z-score on raw ms would call every tail an anomaly. On the log scale the distribution is
 * close to symmetric, "twice as slow" is the same distance everywhere, and exp(mean) is the
 * geometric mean. Arithmetic mean/stddev in ms are kept for display only. Success rates are
 * bounded ratios and are summarised as they are.
 */

/** What was seen in one window (an hour, a day, a server's week). */
export interface WindowAggregate {
  /** Typical latency of the window: p50 of its merged histogram, ms. null when none. */
  latencyMs: number | null;
  /** Latency samples behind latencyMs. */
  latencySamples: number;
  /** Conclusive probes (see probe-outcome-rules) and how many of them were up. */
  probes: number;
  probesUp: number;
  reports: number;
  reportSuccesses: number;
}

/** One rollup row (hourly or daily) as far as baselines and trust need it. */
export interface RollupCounts {
  probes: number;
  probesUp: number;
  reports: number;
  reportSuccesses: number;
  /** Latency of the probes that answered MCP (failed probes' timings would measure the failure). */
  latencyHist: LatencyHistogram;
}

/** Folds rollup rows into one window aggregate (latency = p50 of the merged histogram). */
export function aggregateWindow(rows: readonly RollupCounts[]): WindowAggregate {
  const hist = mergeHistograms(rows.map((r) => r.latencyHist));
  let probes = 0;
  let probesUp = 0;
  let reports = 0;
  let reportSuccesses = 0;
  for (const r of rows) {
    probes += r.probes;
    probesUp += r.probesUp;
    reports += r.reports;
    reportSuccesses += r.reportSuccesses;
  }
  return {
    latencyMs: histogramQuantile(hist, 0.5),
    latencySamples: histogramCount(hist),
    probes,
    probesUp,
    reports,
    reportSuccesses,
  };
}

export interface LatencyBaseline {
  /** Windows that had a latency. */
  samples: number;
  /** Mean and sample standard deviation of ln(latency ms). */
  log_mean: number;
  log_stddev: number;
  /** exp(log_mean). */
  geo_mean_ms: number;
  /** Arithmetic, for display. */
  mean_ms: number;
  stddev_ms: number;
  p50_ms: number;
  p95_ms: number;
}

export interface RateBaseline {
  /** Windows with at least `minTrialsPerSample` trials. */
  samples: number;
  mean: number;
  stddev: number;
}

export interface Baseline {
  /** Windows offered (servers, for a category baseline). */
  samples: number;
  latency: LatencyBaseline | null;
  /** Probe success (up / conclusive probes). */
  availability: RateBaseline | null;
  /** Agent-reported success (successes / reports). */
  success_rate: RateBaseline | null;
}

function stddevOf(values: readonly number[]): number {
  return values.length >= 2 ? sampleStandardDeviation(values) : 0;
}

function rateBaseline(rates: readonly number[]): RateBaseline | null {
  if (rates.length === 0) return null;
  return { samples: rates.length, mean: mean(rates), stddev: stddevOf(rates) };
}

export function computeBaseline(
  windows: readonly WindowAggregate[],
  rules: TrustRules = TRUST_RULES,
): Baseline {
  const minTrials = rules.baseline.minTrialsPerSample;
  const latencies = windows.flatMap((w) =>
    w.latencyMs !== null && w.latencyMs > 0 && w.latencySamples > 0 ? [w.latencyMs] : [],
  );
  const logs = latencies.map(Math.log);
  const latency: LatencyBaseline | null =
    logs.length === 0
      ? null
      : {
          samples: logs.length,
          log_mean: mean(logs),
          log_stddev: stddevOf(logs),
          geo_mean_ms: Math.exp(mean(logs)),
          mean_ms: mean(latencies),
          stddev_ms: stddevOf(latencies),
          p50_ms: Math.exp(quantile(logs, 0.5)),
          p95_ms: Math.exp(quantile(logs, 0.95)),
        };
  return {
    samples: windows.length,
    latency,
    availability: rateBaseline(
      windows.flatMap((w) => (w.probes >= minTrials ? [w.probesUp / w.probes] : [])),
    ),
    success_rate: rateBaseline(
      windows.flatMap((w) => (w.reports >= minTrials ? [w.reportSuccesses / w.reports] : [])),
    ),
  };
}

export interface CategoryBaseline extends Baseline {
  category: Category;
  window_days: number;
  computed_at: Date;
}

/**
 * One baseline per category (all of CATEGORIES, empty ones included) from each server's
 * aggregate over the last `categoryWindowDays`.
 */
export function computeCategoryBaselines(
  servers: readonly { category: Category; window: WindowAggregate }[],
  now: Date,
  rules: TrustRules = TRUST_RULES,
): Record<Category, CategoryBaseline> {
  const byCategory = new Map<Category, WindowAggregate[]>(CATEGORIES.map((c) => [c, []]));
  for (const s of servers) byCategory.get(s.category)?.push(s.window);
  const out = {} as Record<Category, CategoryBaseline>;
  for (const [category, windows] of byCategory) {
    out[category] = {
      category,
      window_days: rules.baseline.categoryWindowDays,
      computed_at: now,
      ...computeBaseline(windows, rules),
    };
  }
  return out;
}
