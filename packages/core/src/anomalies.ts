import type { Baseline, WindowAggregate } from './baselines.ts';
import { TRUST_RULES, type TrustRules } from './trust-rules.ts';

/**
 * Anomaly detection: a server's recent window scored as z-scores against (a) its own rolling
 * baseline (`self`) and (b) its category baseline (`category`), for latency (on ln ms, see
 * baselines.ts), availability (probe success) and agent-reported success rate.
 *
 * Only the harmful direction opens an anomaly: slower latency, lower success. A server that
 * gets faster or more reliable is not a problem to report.
 *
 * Open anomalies are state: `evaluateAnomalies` is the pure transition from the anomalies open
 * before this window to those open after it, with hysteresis (open at |z| ≥ openZ, clear only
 * below clearZ).
 */

export const ANOMALY_METRICS = ['latency', 'availability', 'success_rate'] as const;
export type AnomalyMetric = (typeof ANOMALY_METRICS)[number];
export const ANOMALY_SCOPES = ['self', 'category'] as const;
export type AnomalyScope = (typeof ANOMALY_SCOPES)[number];
export type AnomalySeverity = 'low' | 'medium' | 'high';
export type AnomalyCheckStatus = 'normal' | 'anomalous' | 'insufficient_baseline' | 'insufficient_data';

export interface AnomalyCheck {
  metric: AnomalyMetric;
  scope: AnomalyScope;
  status: AnomalyCheckStatus;
  /** ms for latency, a ratio 0..1 otherwise. null when the window had no such data. */
  observed: number | null;
  observation_samples: number;
  /** Geometric mean in ms for latency, mean ratio otherwise. */
  baseline_mean: number | null;
  /** Standard deviation the z was divided by, after floors (ln-ms units for latency). */
  baseline_stddev: number | null;
  baseline_samples: number;
  /** Signed z = (observed − mean) / stddev on the metric's scale; null if not computed. */
  z: number | null;
  /** Set when status is anomalous. */
  severity: AnomalySeverity | null;
  detail: string;
}

export interface ScopedBaselines {
  self: Baseline | null;
  category: Baseline | null;
}

/** Positive = worse: slower, or less successful. */
function harm(metric: AnomalyMetric, z: number): number {
  return metric === 'latency' ? z : -z;
}

export function anomalySeverity(harmfulZ: number, rules: TrustRules = TRUST_RULES): AnomalySeverity {
  if (harmfulZ >= rules.anomaly.highZ) return 'high';
  if (harmfulZ >= rules.anomaly.mediumZ) return 'medium';
  return 'low';
}

const SCOPE_WORDS: Record<AnomalyScope, string> = { self: 'own baseline', category: 'category baseline' };

function fmt(metric: AnomalyMetric, value: number): string {
  return metric === 'latency' ? `${Math.round(value)} ms` : `${(value * 100).toFixed(1)} %`;
}

/** One metric of one window against one baseline, on the metric's own scale. */
interface MetricView {
  baselineSamples: number;
  observed: number | null;
  observationSamples: number;
  minObservation: number;
  /** mean, divisor and z; only called once both sides have enough samples. */
  score(): { mean: number; stddev: number; z: number };
}

function latencyView(recent: WindowAggregate, baseline: Baseline | null, rules: TrustRules): MetricView {
  const b = baseline?.latency ?? null;
  const observed = recent.latencyMs !== null && recent.latencyMs > 0 ? recent.latencyMs : null;
  return {
    baselineSamples: b?.samples ?? 0,
    observed,
    observationSamples: observed === null ? 0 : recent.latencySamples,
    minObservation: rules.anomaly.minObservationSamples.latency,
    score() {
      const stddev = Math.max(b!.log_stddev, rules.baseline.stddevFloor.logLatency);
      return { mean: b!.geo_mean_ms, stddev, z: (Math.log(observed!) - b!.log_mean) / stddev };
    },
  };
}

function rateView(
  metric: 'availability' | 'success_rate',
  recent: WindowAggregate,
  baseline: Baseline | null,
  rules: TrustRules,
): MetricView {
  const b = (metric === 'availability' ? baseline?.availability : baseline?.success_rate) ?? null;
  const [successes, trials] =
    metric === 'availability' ? [recent.probesUp, recent.probes] : [recent.reportSuccesses, recent.reports];
  const observed = trials > 0 ? successes / trials : null;
  return {
    baselineSamples: b?.samples ?? 0,
    observed,
    observationSamples: trials,
    minObservation: rules.anomaly.minObservationSamples.rate,
    score() {
      // The window's own sampling noise (binomial, at the baseline rate) adds to the spread
      // between windows: 2 failures in 5 trials is less surprising than 40 in 100.
      const spread = Math.max(b!.stddev, rules.baseline.stddevFloor.rate);
      const stddev = Math.sqrt(spread * spread + (b!.mean * (1 - b!.mean)) / trials);
      return { mean: b!.mean, stddev, z: (observed! - b!.mean) / stddev };
    },
  };
}

function checkOne(
  metric: AnomalyMetric,
  scope: AnomalyScope,
  recent: WindowAggregate,
  baseline: Baseline | null,
  rules: TrustRules,
): AnomalyCheck {
  const view =
    metric === 'latency' ? latencyView(recent, baseline, rules) : rateView(metric, recent, baseline, rules);
  const minBaseline = rules.anomaly.minBaselineSamples[scope];
  const unjudged = {
    metric,
    scope,
    observed: view.observed,
    observation_samples: view.observationSamples,
    baseline_mean: null,
    baseline_stddev: null,
    baseline_samples: view.baselineSamples,
    z: null,
    severity: null,
  };
  if (view.baselineSamples < minBaseline) {
    return {
      ...unjudged,
      status: 'insufficient_baseline',
      detail: `${metric}: ${SCOPE_WORDS[scope]} has ${view.baselineSamples} samples; needs ${minBaseline}`,
    };
  }
  if (view.observed === null || view.observationSamples < view.minObservation) {
    return {
      ...unjudged,
      status: 'insufficient_data',
      detail: `${metric}: recent window has ${view.observationSamples} samples; needs ${view.minObservation}`,
    };
  }
  const { mean, stddev, z } = view.score();
  const h = harm(metric, z);
  const anomalous = h >= rules.anomaly.openZ;
  const scale = metric === 'latency' ? ' on ln ms' : '';
  return {
    ...unjudged,
    status: anomalous ? 'anomalous' : 'normal',
    baseline_mean: mean,
    baseline_stddev: stddev,
    z,
    severity: anomalous ? anomalySeverity(h, rules) : null,
    detail: `${metric} ${fmt(metric, view.observed)} vs ${SCOPE_WORDS[scope]} ${fmt(metric, mean)} (z ${z.toFixed(1)}${scale}, ${view.baselineSamples} samples)`,
  };
}

/** All metric × scope checks of one recent window, stateless (no hysteresis). */
export function checkAnomalies(
  recent: WindowAggregate,
  baselines: ScopedBaselines,
  rules: TrustRules = TRUST_RULES,
): AnomalyCheck[] {
  return ANOMALY_SCOPES.flatMap((scope) =>
    ANOMALY_METRICS.map((metric) => checkOne(metric, scope, recent, baselines[scope], rules)),
  );
}

/** An open anomaly as stored (one per server, metric and scope). */
export interface OpenAnomaly {
  metric: AnomalyMetric;
  scope: AnomalyScope;
  observed: number;
  baseline_mean: number;
  baseline_stddev: number;
  baseline_samples: number;
  z: number;
  severity: AnomalySeverity;
  detail: string;
  detected_at: Date;
}

export interface ClearedAnomaly extends OpenAnomaly {
  cleared_at: Date;
}

export interface AnomalyTransition {
  /** Newly opened in this window (detected_at = now). */
  opened: OpenAnomaly[];
  /** Previously open, now back below clearZ (cleared_at = now). */
  cleared: ClearedAnomaly[];
  /**
   * Previously open and not cleared, with the latest figures (detected_at kept). One that could
   * not be judged this window (insufficient data) stays open unchanged: no evidence is not
   * evidence of recovery.
   */
  stillOpen: OpenAnomaly[];
  checks: AnomalyCheck[];
}

function toOpen(check: AnomalyCheck, severity: AnomalySeverity, detectedAt: Date): OpenAnomaly {
  return {
    metric: check.metric,
    scope: check.scope,
    observed: check.observed!,
    baseline_mean: check.baseline_mean!,
    baseline_stddev: check.baseline_stddev!,
    baseline_samples: check.baseline_samples,
    z: check.z!,
    severity,
    detail: check.detail,
    detected_at: detectedAt,
  };
}

export function evaluateAnomalies(
  previousOpen: readonly OpenAnomaly[],
  recent: WindowAggregate,
  baselines: ScopedBaselines,
  now: Date,
  rules: TrustRules = TRUST_RULES,
): AnomalyTransition {
  const checks = checkAnomalies(recent, baselines, rules);
  const open = new Map<string, OpenAnomaly>();
  for (const a of previousOpen) {
    const key = `${a.metric}:${a.scope}`;
    if (!open.has(key)) open.set(key, a);
  }
  const result: AnomalyTransition = { opened: [], cleared: [], stillOpen: [], checks };
  for (const check of checks) {
    const previous = open.get(`${check.metric}:${check.scope}`);
    const judged = check.z !== null;
    const h = judged ? harm(check.metric, check.z!) : 0;
    if (previous) {
      if (!judged) result.stillOpen.push(previous);
      else if (h < rules.anomaly.clearZ) result.cleared.push({ ...previous, cleared_at: now });
      else result.stillOpen.push(toOpen(check, anomalySeverity(h, rules), previous.detected_at));
    } else if (check.status === 'anomalous') {
      result.opened.push(toOpen(check, check.severity!, now));
    }
  }
  return result;
}
