import { HISTOGRAM_LAYOUT } from './latency-histogram.ts';

/**
 * Every constant of the trust engine in one place, so the API can publish them and
 * docs/scoring.md can cite them. Each value says why it is what it is. Functions take a
 * `rules` argument defaulting to TRUST_RULES; pass a modified copy to experiment (the
 * objects are frozen: spread them, e.g. `{ ...TRUST_RULES, verdict: { ...TRUST_RULES.verdict,
 * failAfterConsecutiveFailures: 3 } }`).
 */
export interface TrustRules {
  /** z of the Wilson score intervals (1.96 = two-sided 95 %). */
  readonly wilsonZ: number;
  readonly windows: Readonly<{
    /** Probes counted for availability, latency and the verdict: the last N hours. */
    probeHours: number;
    /** Agent reports counted: the last N days. */
    reportDays: number;
  }>;
  /** Relative weights; renormalized over the components that have evidence. */
  readonly weights: Readonly<{
    availability: number;
    reported_success: number;
    latency: number;
    freshness: number;
  }>;
  readonly availability: Readonly<{
    /** Availability is capped at 1 − penalty × (observed failure rate). */
    failurePenalty: number;
  }>;
  readonly latency: Readonly<{
    /** z (log scale, against the category) at or below which latency earns full credit. */
    fullCreditZ: number;
    /** z at or above which latency earns nothing; linear in between. */
    zeroCreditZ: number;
  }>;
  readonly freshness: Readonly<{ halfLifeHours: number }>;
  readonly confidence: Readonly<{
    /** Samples at which a count-based component is half-way to full evidence. */
    halfSamples: number;
    /** Baseline servers at which the category comparison is half-way to full evidence. */
    halfBaselineServers: number;
  }>;
  readonly verdict: Readonly<{
    passScore: number;
    failScore: number;
    /** Conclusive probes in the window before the score may PASS or FAIL a server. */
    minProbesForScoreVerdict: number;
    /** PASS also needs this share of the window's conclusive probes up. */
    passMinAvailability: number;
    /** K: this many failed probes in a row (down / not_mcp) → FAIL. */
    failAfterConsecutiveFailures: number;
  }>;
  readonly baseline: Readonly<{
    /** Category baselines are built from each server's aggregate over this many days. */
    categoryWindowDays: number;
    /** A server's own baseline: its hourly aggregates over this many days. */
    selfWindowDays: number;
    /** A window contributes a rate sample only with at least this many trials. */
    minTrialsPerSample: number;
    /** Floors on standard deviations before dividing by them (z-scores). */
    stddevFloor: Readonly<{ logLatency: number; rate: number }>;
  }>;
  readonly anomaly: Readonly<{
    openZ: number;
    clearZ: number;
    mediumZ: number;
    highZ: number;
    minBaselineSamples: Readonly<{ self: number; category: number }>;
    minObservationSamples: Readonly<{ latency: number; rate: number }>;
  }>;
  readonly history: Readonly<{
    trendMinDays: number;
    /** |slope| of trust score per day below which the trend is stable. */
    trendSlopePerDay: number;
  }>;
  readonly compliance: Readonly<{
    riskLevels: Readonly<{ LOW: number; MEDIUM: number; HIGH: number }>;
    minMonitoringDays: number;
    continuity: Readonly<{
      continuousMinCoverage: number;
      /** Longest tolerated gap, in expected probe intervals … */
      maxGapIntervals: number;
      /** … but never less than this (hourly data cannot see shorter gaps). */
      maxGapFloorS: number;
      interruptedBelowCoverage: number;
      interruptedAfterS: number;
    }>;
  }>;
  readonly histogram: typeof HISTOGRAM_LAYOUT;
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(o);
}

export const TRUST_RULES: TrustRules = deepFreeze({
  // The usual two-sided 95 % interval: 3 successes of 3 give a lower bound of 0.44, not 1.
  wilsonZ: 1.96,
  windows: {
    // One day of probes (288 at the default 300 s interval): long enough to measure a 30 %
    // failure rate precisely, short enough that an outage stops weighing after a day.
    probeHours: 24,
    // Agent reports are sporadic; a week gathers enough of them to say something.
    reportDays: 7,
  },
  weights: {
    // Our own measurement dominates: it is regular, unforgeable and comparable across servers.
    availability: 0.6,
    // Reports are what agents actually experienced, but anyone can send them.
    reported_success: 0.2,
    // Speed matters less than answering at all, and only relative to peers.
    latency: 0.1,
    // Recency of the last good probe: small, since availability already covers the window.
    freshness: 0.1,
  },
  availability: {
    // Availability is capped at 1 − 4 × the observed failure rate: 10 % failed probes → 0.6 at
    // most, 25 % → 0, however many probes answered. The Wilson lower bound alone rewards volume:
    // 10 of 10 (bound 0.72) would rank below a server measured at 75 % over 288 probes, and a
    // 30 %-flaky server would score like a healthy one. With the cap, observed failures weigh
    // more than missing evidence. (Small samples are protected by minProbesForScoreVerdict.)
    failurePenalty: 4,
  },
  latency: {
    // Within one standard deviation (log scale) of the category: normal, full credit.
    fullCreditZ: 1,
    // Three standard deviations slower than peers: an outlier, no credit.
    zeroCreditZ: 3,
  },
  freshness: {
    // A good probe six hours old counts half; one a day old, 1/16.
    halfLifeHours: 6,
  },
  confidence: {
    // 10 probes → half of the availability evidence; 100 → 0.91.
    halfSamples: 10,
    // A category baseline of 5 servers is half-trusted as a yardstick.
    halfBaselineServers: 5,
  },
  verdict: {
    // SPEC 2.4: above 70 reliable, below 30 risky (COMPAT: PASS ≥ 70, FAIL < 30).
    passScore: 70,
    failScore: 30,
    // 10 probes: a server failing 30 % of the time shows a failure within its first 10 probes
    // with probability 1 − 0.7^10 = 97 %. It is also the most the healthy-server rule allows.
    minProbesForScoreVerdict: 10,
    // PASS means "reliable", and the score is a graded figure that a server failing 8 % of its
    // probes can still push past 70. The gate also makes early luck unlikely: one failure blocks
    // PASS until 20 probes, and a 30 %-flaky server shows at most one failure in its first 20
    // probes with probability 0.8 % (none in its first 10: 2.8 %, which no rule that lets a
    // healthy server PASS after 10 probes can avoid).
    passMinAvailability: 0.95,
    // K = 2: a dead server is FAIL at its second failed probe (two intervals after dying), while
    // one lost probe (a blip) only makes it UNCERTAIN.
    failAfterConsecutiveFailures: 2,
  },
  baseline: {
    categoryWindowDays: 7,
    selfWindowDays: 7,
    // Three trials per window: a rate from fewer is mostly noise.
    minTrialsPerSample: 3,
    stddevFloor: {
      // 0.2 in ln(ms) ≈ ±22 %: normal network jitter; a server steadier than that should not
      // raise an anomaly for every few milliseconds (opening at z = 3 needs ≈ 1.8× its latency).
      logLatency: 0.2,
      // 0.1: a perfect history (stddev 0) opens an anomaly only at a drop of ≥ 30 points.
      rate: 0.1,
    },
  },
  anomaly: {
    // z ≥ 3 in the harmful direction: under a normal model 0.13 % of windows by chance — about
    // once a month of hourly checks per metric and baseline, rare enough to read as a signal.
    openZ: 3,
    // Hysteresis: an open anomaly clears only once z is back below 1.5, so a metric hovering
    // around 3 does not open and clear every hour.
    clearZ: 1.5,
    // At the latency floor, z 4 ≈ 2.2× and z 6 ≈ 3.3× the usual latency (the old service
    // called > 3× "high").
    mediumZ: 4,
    highZ: 6,
    // Own baseline: a day of hourly windows; category: five servers. Fewer → insufficient_baseline.
    minBaselineSamples: { self: 24, category: 5 },
    minObservationSamples: { latency: 3, rate: 5 },
  },
  history: {
    // A trend needs a week of daily scores; below half a point a day (15 points a month) the
    // series is stable.
    trendMinDays: 7,
    trendSlopePerDay: 0.5,
  },
  compliance: {
    riskLevels: { LOW: 75, MEDIUM: 50, HIGH: 25 },
    // Article-12-style record keeping is judged on at least a week of daily snapshots.
    minMonitoringDays: 7,
    continuity: {
      // 90 % of the expected probes arrived …
      continuousMinCoverage: 0.9,
      // … and no silence longer than 3 intervals (one retry backoff is not a gap) …
      maxGapIntervals: 3,
      // … or one hour, whichever is longer.
      maxGapFloorS: 3600,
      // Under half the expected probes, or silent for a day: monitoring is interrupted.
      interruptedBelowCoverage: 0.5,
      interruptedAfterS: 86_400,
    },
  },
  histogram: HISTOGRAM_LAYOUT,
});
