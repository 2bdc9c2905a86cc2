import { type Baseline, computeBaseline } from './baselines.ts';
import { histogramFromSamples, histogramQuantile } from './latency-histogram.ts';
import { isConclusiveProbe, nextConsecutiveFailures, probeOutcomeClass } from './probe-outcome-rules.ts';
import type { ProbeOutcome } from './probe-result.ts';
import { TRUST_RULES } from './trust-rules.ts';
import { assessTrust, type TrustAssessment, type TrustInput } from './trust-score.ts';

/**
 * Test support: replays a sequence of probe outcomes through time the way the worker and the
 * rollups would see them, and assesses trust after each probe. Not exported from the package.
 */

export const START = new Date('2026-05-01T00:00:00Z');

/** A category of eight servers, typical latency ≈ 190 ms (geometric mean). */
export const CATEGORY_BASELINE: Baseline = computeBaseline(
  [60, 90, 120, 150, 200, 250, 400, 800].map((ms) => ({
    latencyMs: ms,
    latencySamples: 288,
    probes: 288,
    probesUp: 285,
    reports: 0,
    reportSuccesses: 0,
  })),
);

export interface ProbeStep {
  outcome: ProbeOutcome;
  latencyMs?: number;
}

export interface TimelineOptions {
  intervalS?: number;
  /** Default 120 ms: fast for the category above. */
  latencyMs?: number;
  categoryBaseline?: Baseline | null;
  /** Agent reports in the report window, constant over the run. */
  reports?: { total: number; successes: number };
}

export interface TimelinePoint {
  /** 1-based probe number. */
  probe: number;
  now: Date;
  input: TrustInput;
  assessment: TrustAssessment;
}

export function* trustTimeline(
  steps: Iterable<ProbeOutcome | ProbeStep>,
  options: TimelineOptions = {},
): Generator<TimelinePoint> {
  const intervalMs = (options.intervalS ?? 300) * 1000;
  const windowMs = TRUST_RULES.windows.probeHours * 3_600_000;
  const history: { at: number; outcome: ProbeOutcome; latencyMs: number }[] = [];
  let consecutive = 0;
  let lastUpAt: Date | null = null;
  let probe = 0;
  for (const raw of steps) {
    const step = typeof raw === 'string' ? { outcome: raw } : raw;
    const now = new Date(START.getTime() + probe * intervalMs);
    probe++;
    history.push({
      at: now.getTime(),
      outcome: step.outcome,
      latencyMs: step.latencyMs ?? options.latencyMs ?? 120,
    });
    while (history.length > 0 && history[0]!.at <= now.getTime() - windowMs) history.shift();
    consecutive = nextConsecutiveFailures(consecutive, step.outcome);
    if (probeOutcomeClass(step.outcome) === 'up') lastUpAt = now;
    const conclusive = history.filter((p) => isConclusiveProbe(p.outcome));
    const ups = conclusive.filter((p) => probeOutcomeClass(p.outcome) === 'up');
    const hist = histogramFromSamples(ups.map((p) => p.latencyMs));
    const p50 = histogramQuantile(hist, 0.5);
    const input: TrustInput = {
      now,
      probes: { total: conclusive.length, up: ups.length },
      reports: options.reports ?? { total: 0, successes: 0 },
      latestProbe: { outcome: step.outcome, at: now },
      lastUpAt,
      consecutiveFailures: consecutive,
      latency: p50 === null ? null : { p50Ms: p50, samples: ups.length },
      categoryBaseline: options.categoryBaseline === undefined ? CATEGORY_BASELINE : options.categoryBaseline,
    };
    yield { probe, now, input, assessment: assessTrust(input) };
  }
}

export function runTimeline(
  steps: Iterable<ProbeOutcome | ProbeStep>,
  options?: TimelineOptions,
): TimelinePoint[] {
  return [...trustTimeline(steps, options)];
}

export function repeat<T>(value: T, n: number): T[] {
  return Array.from({ length: n }, () => value);
}
