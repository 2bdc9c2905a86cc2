import type { Baseline } from './baselines.ts';
import { isFailedProbe } from './probe-outcome-rules.ts';
import type { ProbeOutcome } from './probe-result.ts';
import { TRUST_RULES, type TrustRules } from './trust-rules.ts';
import { wilsonLowerBound } from './wilson.ts';

/**
 * The trust score (0–100), its confidence and the PASS / UNCERTAIN / FAIL verdict, from
 * measured evidence only. The formula and every threshold are written up in docs/scoring.md.
 *
 * score = 100 × Σ wᵢ·cᵢ / Σ wᵢ over the components i that have evidence:
 * - availability: min(Wilson lower bound, 1 − penalty × observed failure rate) of the
 *   conclusive probes of the last `probeHours` — the bound limits what few successes can
 *   prove, the cap what observed failures cost;
 * - reported_success: Wilson lower bound of agent-reported successes of the last `reportDays`;
 * - latency: the server's p50 against its category baseline as a z on ln(ms): full credit up
 *   to fullCreditZ, none from zeroCreditZ, linear in between;
 * - freshness: 0.5^(age of the last good probe / halfLifeHours).
 */

export const VERDICTS = ['PASS', 'UNCERTAIN', 'FAIL'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const TRUST_REASON_CODES = [
  'healthy',
  'no_runtime_evidence',
  'reports_only',
  'consecutive_failures',
  'not_mcp',
  'auth_required',
  'low_score',
  'latest_probe_failed',
  'degraded',
  'insufficient_evidence',
  'recent_failures',
  'moderate_score',
] as const;
export type TrustReasonCode = (typeof TRUST_REASON_CODES)[number];

export type TrustEvidence = 'none' | 'reports_only' | 'probes_only' | 'probes_and_reports';

export interface TrustInput {
  now: Date;
  /** Conclusive probes (up, degraded, down, not_mcp) of the last `probeHours`, and how many were up/degraded. */
  probes: { total: number; up: number };
  /** Agent reports of the last `reportDays`. */
  reports: { total: number; successes: number };
  /** The latest probe of any outcome; evidence only if within the probe window. */
  latestProbe: { outcome: ProbeOutcome; at: Date } | null;
  /** Time of the latest up/degraded probe, ever. */
  lastUpAt: Date | null;
  /** servers.consecutive_failures (see nextConsecutiveFailures). */
  consecutiveFailures: number;
  /** p50 of the server's probe latency over the probe window (merged histogram) and its sample count. */
  latency: { p50Ms: number; samples: number } | null;
  /** The baseline of the server's category (computeCategoryBaselines). */
  categoryBaseline: Baseline | null;
}

export interface TrustComponent {
  /** 0..1. */
  value: number;
  /** Share of the score after renormalization over the present components (they sum to 1). */
  weight: number;
  /** 0..1: how much evidence stands behind `value` (feeds confidence). */
  evidence: number;
  detail: Record<string, number | string | null>;
}

export interface TrustComponents {
  availability: TrustComponent | null;
  reported_success: TrustComponent | null;
  latency: TrustComponent | null;
  freshness: TrustComponent | null;
}

export interface TrustAssessment {
  verdict: Verdict;
  /** 0–100 with one decimal; null when no component has evidence. */
  score: number | null;
  reason_code: TrustReasonCode;
  /** One sentence for humans, saying what the verdict rests on. */
  reason: string;
  evidence: TrustEvidence;
  /** 0..1: evidence-weighted coverage of all components (see docs/scoring.md). */
  confidence: number;
  components: TrustComponents;
}

type ComponentName = keyof TrustComponents;
type RawComponent = Omit<TrustComponent, 'weight'>;

const HOUR_MS = 3_600_000;
const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));
const saturation = (n: number, half: number) => n / (n + half);

function availabilityComponent(probes: TrustInput['probes'], rules: TrustRules): RawComponent {
  const lower = wilsonLowerBound(probes.up, probes.total, rules.wilsonZ);
  const failureRate = 1 - probes.up / probes.total;
  const failureCap = clamp01(1 - rules.availability.failurePenalty * failureRate);
  return {
    value: Math.min(lower, failureCap),
    evidence: saturation(probes.total, rules.confidence.halfSamples),
    detail: {
      probes: probes.total,
      up: probes.up,
      observed_rate: round(probes.up / probes.total, 4),
      wilson_lower: round(lower, 4),
      failure_cap: round(failureCap, 4),
    },
  };
}

function reportsComponent(reports: TrustInput['reports'], rules: TrustRules): RawComponent {
  const lower = wilsonLowerBound(reports.successes, reports.total, rules.wilsonZ);
  return {
    value: lower,
    evidence: saturation(reports.total, rules.confidence.halfSamples),
    detail: {
      reports: reports.total,
      successes: reports.successes,
      observed_rate: round(reports.successes / reports.total, 4),
      wilson_lower: round(lower, 4),
    },
  };
}

function latencyComponent(input: TrustInput, rules: TrustRules): RawComponent | null {
  const baseline = input.categoryBaseline?.latency;
  const latency = input.latency;
  if (!latency || latency.samples <= 0 || !(latency.p50Ms > 0)) return null;
  // The same minimum as a category anomaly check: fewer servers make no yardstick.
  if (!baseline || baseline.samples < rules.anomaly.minBaselineSamples.category) return null;
  const stddev = Math.max(baseline.log_stddev, rules.baseline.stddevFloor.logLatency);
  const z = (Math.log(latency.p50Ms) - baseline.log_mean) / stddev;
  const { fullCreditZ, zeroCreditZ } = rules.latency;
  return {
    value: clamp01((zeroCreditZ - z) / (zeroCreditZ - fullCreditZ)),
    evidence:
      saturation(latency.samples, rules.confidence.halfSamples) *
      saturation(baseline.samples, rules.confidence.halfBaselineServers),
    detail: {
      p50_ms: round(latency.p50Ms, 1),
      category_geo_mean_ms: round(baseline.geo_mean_ms, 1),
      category_servers: baseline.samples,
      z: round(z, 2),
    },
  };
}

function freshnessComponent(input: TrustInput, rules: TrustRules): RawComponent {
  if (!input.lastUpAt) return { value: 0, evidence: 1, detail: { last_up_at: null, age_hours: null } };
  const ageHours = Math.max(0, input.now.getTime() - input.lastUpAt.getTime()) / HOUR_MS;
  return {
    value: 0.5 ** (ageHours / rules.freshness.halfLifeHours),
    evidence: 1,
    detail: { last_up_at: input.lastUpAt.toISOString(), age_hours: round(ageHours, 2) },
  };
}

function combine(raw: Record<ComponentName, RawComponent | null>, rules: TrustRules) {
  const names = Object.keys(raw) as ComponentName[];
  const present = names.filter((n) => raw[n] !== null);
  const presentWeight = present.reduce((s, n) => s + rules.weights[n], 0);
  const allWeight = names.reduce((s, n) => s + rules.weights[n], 0);
  const components = {} as TrustComponents;
  let weighted = 0;
  let evidence = 0;
  for (const n of names) {
    const c = raw[n];
    if (!c) {
      components[n] = null;
      continue;
    }
    const weight = rules.weights[n] / presentWeight;
    weighted += weight * c.value;
    evidence += rules.weights[n] * c.evidence;
    components[n] = {
      value: round(c.value, 4),
      weight: round(weight, 4),
      evidence: round(c.evidence, 4),
      detail: c.detail,
    };
  }
  return {
    components,
    score: present.length === 0 ? null : round(100 * weighted, 1),
    confidence: round(evidence / allWeight, 3),
  };
}

export function assessTrust(input: TrustInput, rules: TrustRules = TRUST_RULES): TrustAssessment {
  const { now, probes, reports, latestProbe } = input;
  const probeAge = latestProbe ? now.getTime() - latestProbe.at.getTime() : Infinity;
  const hasProbeEvidence = probeAge <= rules.windows.probeHours * HOUR_MS;
  const hasReports = reports.total > 0;
  const hasAvailability = hasProbeEvidence && probes.total > 0;

  const { components, score, confidence } = combine(
    {
      availability: hasAvailability ? availabilityComponent(probes, rules) : null,
      reported_success: hasReports ? reportsComponent(reports, rules) : null,
      latency: hasAvailability ? latencyComponent(input, rules) : null,
      freshness: hasAvailability ? freshnessComponent(input, rules) : null,
    },
    rules,
  );
  const evidence: TrustEvidence = hasProbeEvidence
    ? hasReports
      ? 'probes_and_reports'
      : 'probes_only'
    : hasReports
      ? 'reports_only'
      : 'none';
  const judge = (verdict: Verdict, reason_code: TrustReasonCode, reason: string): TrustAssessment => ({
    verdict,
    score,
    reason_code,
    reason,
    evidence,
    confidence,
    components,
  });

  const v = rules.verdict;
  const window = `the last ${rules.windows.probeHours} h`;
  if (!hasProbeEvidence) {
    if (!hasReports) {
      return judge(
        'UNCERTAIN',
        'no_runtime_evidence',
        `No probe in ${window} and no agent report in the last ${rules.windows.reportDays} d: no runtime evidence.`,
      );
    }
    return judge(
      'UNCERTAIN',
      'reports_only',
      `Only agent reports (${reports.total}) and no probe of ours in ${window}; reports alone cannot PASS or FAIL a server.`,
    );
  }
  const latest = latestProbe!.outcome;
  const latestFailed = isFailedProbe(latest);
  if (latestFailed && input.consecutiveFailures >= v.failAfterConsecutiveFailures) {
    return latest === 'not_mcp'
      ? judge('FAIL', 'not_mcp', `The last ${input.consecutiveFailures} probes got answers that are not MCP.`)
      : judge('FAIL', 'consecutive_failures', `The last ${input.consecutiveFailures} probes failed.`);
  }
  if (latest === 'auth_required') {
    return judge(
      'UNCERTAIN',
      'auth_required',
      'The server requires authorization; without credentials it cannot be verified.',
    );
  }
  const enoughProbes = probes.total >= v.minProbesForScoreVerdict;
  if (enoughProbes && score !== null && score < v.failScore) {
    return judge(
      'FAIL',
      'low_score',
      `Score ${score} is below ${v.failScore} over ${probes.total} probes in ${window}.`,
    );
  }
  if (latestFailed) {
    return judge(
      'UNCERTAIN',
      'latest_probe_failed',
      `The latest probe failed (${latest}); ${v.failAfterConsecutiveFailures} failures in a row make it FAIL.`,
    );
  }
  if (latest === 'degraded') {
    return judge(
      'UNCERTAIN',
      'degraded',
      'The latest probe was degraded: MCP answered, but part of the handshake failed.',
    );
  }
  if (!enoughProbes || score === null) {
    return judge(
      'UNCERTAIN',
      'insufficient_evidence',
      `${probes.total} of the ${v.minProbesForScoreVerdict} probes needed for a verdict in ${window}.`,
    );
  }
  const observed = probes.up / probes.total;
  if (score >= v.passScore && observed < v.passMinAvailability) {
    return judge(
      'UNCERTAIN',
      'recent_failures',
      `Score ${score}, but only ${(observed * 100).toFixed(1)} % of ${probes.total} probes in ${window} succeeded (PASS needs ${v.passMinAvailability * 100} %).`,
    );
  }
  if (score >= v.passScore) {
    return judge(
      'PASS',
      'healthy',
      `Up at the latest probe; score ${score} over ${probes.total} probes in ${window}.`,
    );
  }
  return judge('UNCERTAIN', 'moderate_score', `Score ${score} is between ${v.failScore} and ${v.passScore}.`);
}
