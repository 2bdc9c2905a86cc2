import { TRUST_RULES, type TrustRules } from './trust-rules.ts';

/**
 * Compliance attestation parts (get_mica_attestation, daily compliance snapshots): risk level
 * from the trust score, monitoring continuity from when probes actually ran, and a compliance
 * grade on the record keeping (EU AI Act Article 12 is about logs kept continuously and
 * exportable, so the grade judges our records of the server; the risk level judges the server).
 */

export const RISK_LEVELS = ['LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** LOW ≥ 75, MEDIUM ≥ 50, HIGH ≥ 25, else CRITICAL (the public service's cut-offs). */
export function riskLevelFromScore(score: number, rules: TrustRules = TRUST_RULES): RiskLevel {
  const t = rules.compliance.riskLevels;
  if (score >= t.LOW) return 'LOW';
  if (score >= t.MEDIUM) return 'MEDIUM';
  if (score >= t.HIGH) return 'HIGH';
  return 'CRITICAL';
}

export type ContinuityStatus = 'continuous' | 'gaps' | 'interrupted';

export interface MonitoringContinuity {
  status: ContinuityStatus;
  /** Probes seen / probes expected at the nominal interval, capped at 100. */
  coverage_pct: number;
  expected_probes: number;
  observed_probes: number;
  /** Longest stretch without a probe, period edges included (hourly data: whole empty hours). */
  longest_gap_s: number;
  /** From the last probe to the end of the period. */
  current_gap_s: number;
  expected_interval_s: number;
}

export interface ContinuityPeriod {
  from: Date;
  to: Date;
  /** The nominal probe interval (PROBE_INTERVAL_S). Failure backoff shows up as gaps. */
  expectedIntervalS: number;
}

function judgeContinuity(
  period: ContinuityPeriod,
  observed: number,
  longestGapS: number,
  currentGapS: number,
  rules: TrustRules,
): MonitoringContinuity {
  const c = rules.compliance.continuity;
  const spanS = Math.max(0, period.to.getTime() - period.from.getTime()) / 1000;
  const expected = Math.max(1, Math.floor(spanS / period.expectedIntervalS));
  const coverage = Math.min(1, observed / expected);
  const maxGapS = Math.max(c.maxGapIntervals * period.expectedIntervalS, c.maxGapFloorS);
  let status: ContinuityStatus;
  if (observed === 0 || currentGapS >= c.interruptedAfterS || coverage < c.interruptedBelowCoverage) {
    status = 'interrupted';
  } else if (coverage >= c.continuousMinCoverage && longestGapS <= maxGapS) {
    status = 'continuous';
  } else {
    status = 'gaps';
  }
  return {
    status,
    coverage_pct: Math.round(coverage * 1000) / 10,
    expected_probes: expected,
    observed_probes: observed,
    longest_gap_s: Math.round(longestGapS),
    current_gap_s: Math.round(currentGapS),
    expected_interval_s: period.expectedIntervalS,
  };
}

/** Continuity from the start times of the probes (those outside the period are ignored). */
export function continuityFromTimestamps(
  timestamps: readonly Date[],
  period: ContinuityPeriod,
  rules: TrustRules = TRUST_RULES,
): MonitoringContinuity {
  const from = period.from.getTime();
  const to = period.to.getTime();
  const times = timestamps
    .map((t) => t.getTime())
    .filter((t) => t >= from && t <= to)
    .sort((a, b) => a - b);
  let longest = 0;
  let previous = from;
  for (const t of times) {
    longest = Math.max(longest, t - previous);
    previous = t;
  }
  const current = to - previous;
  longest = Math.max(longest, current);
  return judgeContinuity(period, times.length, longest / 1000, current / 1000, rules);
}

/**
 * Continuity from hourly probe counts (rollups_hourly), for long periods. Gaps are whole empty
 * hours, a lower bound of the real gap; an hour only partly inside the period still counts.
 */
export function continuityFromHourlyCounts(
  hours: readonly { hour: Date; probes: number }[],
  period: ContinuityPeriod,
  rules: TrustRules = TRUST_RULES,
): MonitoringContinuity {
  const H = 3_600_000;
  const first = Math.floor(period.from.getTime() / H);
  const last = Math.ceil(period.to.getTime() / H) - 1;
  const counts = new Map<number, number>();
  for (const h of hours) {
    const index = Math.floor(h.hour.getTime() / H);
    if (index >= first && index <= last) counts.set(index, (counts.get(index) ?? 0) + h.probes);
  }
  let observed = 0;
  let run = 0;
  let longestRun = 0;
  for (let i = first; i <= last; i++) {
    const n = counts.get(i) ?? 0;
    observed += n;
    run = n > 0 ? 0 : run + 1;
    longestRun = Math.max(longestRun, run);
  }
  return judgeContinuity(period, observed, longestRun * 3600, run * 3600, rules);
}

export type ComplianceGrade = 'FULL' | 'PARTIAL' | 'NON_COMPLIANT';

export const COMPLIANCE_FINDINGS = [
  'no_records',
  'monitoring_interrupted',
  'audit_not_exportable',
  'short_monitoring_history',
  'monitoring_gaps',
  'no_trust_score',
] as const;
export type ComplianceFinding = (typeof COMPLIANCE_FINDINGS)[number];

export interface ComplianceInput {
  /** Latest trust score; null when there is no runtime evidence. */
  trustScore: number | null;
  /** Probes and reports recorded for the server in the period. */
  records: number;
  /** Days with a compliance snapshot. */
  monitoringDays: number;
  continuity: MonitoringContinuity;
  auditExportable: boolean;
}

export interface ComplianceAssessment {
  compliance_grade: ComplianceGrade;
  risk_level: RiskLevel;
  article_12_status: { logging: boolean; continuous_monitoring: boolean; audit_exportable: boolean };
  monitoring_days: number;
  /** Why the grade or risk level is not the best one. */
  findings: ComplianceFinding[];
}

/**
 * - NON_COMPLIANT: nothing recorded, monitoring interrupted, or the trail cannot be exported.
 * - FULL: records, ≥ minMonitoringDays days of snapshots, and continuous monitoring.
 * - PARTIAL: anything in between (too short a history, or gaps).
 * Risk level: from the trust score; with no score at all it is HIGH — unknown is a risk, but
 * CRITICAL is kept for servers measured to be bad.
 */
export function assessCompliance(
  input: ComplianceInput,
  rules: TrustRules = TRUST_RULES,
): ComplianceAssessment {
  const findings: ComplianceFinding[] = [];
  const logging = input.records > 0;
  if (!logging) findings.push('no_records');
  if (input.continuity.status === 'interrupted') findings.push('monitoring_interrupted');
  if (!input.auditExportable) findings.push('audit_not_exportable');
  const nonCompliant = findings.length > 0;
  if (input.monitoringDays < rules.compliance.minMonitoringDays) findings.push('short_monitoring_history');
  if (input.continuity.status === 'gaps') findings.push('monitoring_gaps');
  if (input.trustScore === null) findings.push('no_trust_score');
  const grade: ComplianceGrade = nonCompliant
    ? 'NON_COMPLIANT'
    : input.monitoringDays >= rules.compliance.minMonitoringDays && input.continuity.status === 'continuous'
      ? 'FULL'
      : 'PARTIAL';
  return {
    compliance_grade: grade,
    risk_level: input.trustScore === null ? 'HIGH' : riskLevelFromScore(input.trustScore, rules),
    article_12_status: {
      logging,
      continuous_monitoring: input.continuity.status === 'continuous',
      audit_exportable: input.auditExportable,
    },
    monitoring_days: input.monitoringDays,
    findings,
  };
}
