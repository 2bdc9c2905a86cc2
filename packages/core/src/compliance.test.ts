import { describe, expect, it } from 'vitest';
import {
  assessCompliance,
  continuityFromHourlyCounts,
  continuityFromTimestamps,
  type MonitoringContinuity,
  riskLevelFromScore,
} from './compliance.ts';

const FROM = new Date('2026-05-01T00:00:00Z');
const at = (s: number) => new Date(FROM.getTime() + s * 1000);
const DAY_S = 86_400;

describe('riskLevelFromScore', () => {
  it('uses LOW ≥ 75, MEDIUM ≥ 50, HIGH ≥ 25, else CRITICAL', () => {
    expect([100, 75, 74.9, 50, 49.9, 25, 24.9, 0].map((s) => riskLevelFromScore(s))).toEqual([
      'LOW',
      'LOW',
      'MEDIUM',
      'MEDIUM',
      'HIGH',
      'HIGH',
      'CRITICAL',
      'CRITICAL',
    ]);
  });
});

describe('continuityFromTimestamps', () => {
  const period = { from: FROM, to: at(DAY_S), expectedIntervalS: 300 };
  const every = (intervalS: number, fromS = 0, toS = DAY_S) =>
    Array.from({ length: Math.floor((toS - fromS) / intervalS) }, (_, i) => at(fromS + i * intervalS + 7));

  it('is continuous when probes arrive on schedule, with jitter', () => {
    const c = continuityFromTimestamps(every(300), period);
    expect(c).toMatchObject({
      status: 'continuous',
      coverage_pct: 100,
      expected_probes: 288,
      observed_probes: 288,
    });
    expect(c.longest_gap_s).toBeLessThanOrEqual(300);
  });

  it('shows gaps: a two-hour silence', () => {
    const probes = [...every(300, 0, 10 * 3600), ...every(300, 12 * 3600)];
    const c = continuityFromTimestamps(probes, period);
    expect(c.status).toBe('gaps');
    expect(c.longest_gap_s).toBe(2 * 3600 + 300);
    expect(c.coverage_pct).toBeCloseTo(91.7, 1);
  });

  it('shows gaps: probes too sparse', () => {
    expect(continuityFromTimestamps(every(400), period).status).toBe('gaps');
  });

  it('is interrupted with no probes, under half coverage, or a day of silence', () => {
    expect(continuityFromTimestamps([], period)).toMatchObject({
      status: 'interrupted',
      longest_gap_s: DAY_S,
    });
    expect(continuityFromTimestamps(every(900), period).status).toBe('interrupted');
    const twoDays = { ...period, to: at(2 * DAY_S) };
    const c = continuityFromTimestamps(every(300, 0, DAY_S), twoDays);
    expect(c).toMatchObject({ status: 'interrupted' });
    expect(c.current_gap_s).toBeGreaterThanOrEqual(DAY_S - 300);
  });

  it('ignores probes outside the period', () => {
    const c = continuityFromTimestamps([...every(300), at(-100), at(DAY_S + 100)], period);
    expect(c.observed_probes).toBe(288);
  });
});

describe('continuityFromHourlyCounts', () => {
  const period = { from: FROM, to: at(7 * DAY_S), expectedIntervalS: 300 };
  const hours = (probesAt: (h: number) => number) =>
    Array.from({ length: 7 * 24 }, (_, h) => ({ hour: at(h * 3600), probes: probesAt(h) }));

  it('is continuous with every hour covered', () => {
    expect(
      continuityFromHourlyCounts(
        hours(() => 12),
        period,
      ),
    ).toMatchObject({
      status: 'continuous',
      coverage_pct: 100,
      longest_gap_s: 0,
    });
  });

  it('tolerates one empty hour, not two', () => {
    expect(
      continuityFromHourlyCounts(
        hours((h) => (h === 50 ? 0 : 12)),
        period,
      ).status,
    ).toBe('continuous');
    const two = continuityFromHourlyCounts(
      hours((h) => (h === 50 || h === 51 ? 0 : 12)),
      period,
    );
    expect(two).toMatchObject({ status: 'gaps', longest_gap_s: 7200 });
  });

  it('is interrupted when the last day is silent', () => {
    const c = continuityFromHourlyCounts(
      hours((h) => (h >= 6 * 24 ? 0 : 12)),
      period,
    );
    expect(c).toMatchObject({ status: 'interrupted', current_gap_s: DAY_S });
  });
});

describe('assessCompliance', () => {
  const continuity = (status: MonitoringContinuity['status']): MonitoringContinuity => ({
    status,
    coverage_pct: 100,
    expected_probes: 2016,
    observed_probes: 2016,
    longest_gap_s: 300,
    current_gap_s: 10,
    expected_interval_s: 300,
  });
  const base = {
    trustScore: 92,
    records: 2016,
    monitoringDays: 30,
    continuity: continuity('continuous'),
    auditExportable: true,
  };

  it('is FULL with records, a week of snapshots and continuous monitoring', () => {
    expect(assessCompliance(base)).toEqual({
      compliance_grade: 'FULL',
      risk_level: 'LOW',
      article_12_status: { logging: true, continuous_monitoring: true, audit_exportable: true },
      monitoring_days: 30,
      findings: [],
    });
  });

  it('is PARTIAL with a short history or gaps', () => {
    expect(assessCompliance({ ...base, monitoringDays: 6 })).toMatchObject({
      compliance_grade: 'PARTIAL',
      findings: ['short_monitoring_history'],
    });
    expect(assessCompliance({ ...base, continuity: continuity('gaps') })).toMatchObject({
      compliance_grade: 'PARTIAL',
      findings: ['monitoring_gaps'],
      article_12_status: { continuous_monitoring: false },
    });
  });

  it('is NON_COMPLIANT without records, when interrupted or not exportable', () => {
    expect(assessCompliance({ ...base, records: 0 }).compliance_grade).toBe('NON_COMPLIANT');
    expect(assessCompliance({ ...base, continuity: continuity('interrupted') }).findings).toEqual([
      'monitoring_interrupted',
    ]);
    expect(assessCompliance({ ...base, auditExportable: false }).compliance_grade).toBe('NON_COMPLIANT');
  });

  it('rates risk from the score, and an unknown score as HIGH', () => {
    expect(assessCompliance({ ...base, trustScore: 20 }).risk_level).toBe('CRITICAL');
    const unknown = assessCompliance({ ...base, trustScore: null });
    expect(unknown.risk_level).toBe('HIGH');
    expect(unknown.findings).toContain('no_trust_score');
  });
});
