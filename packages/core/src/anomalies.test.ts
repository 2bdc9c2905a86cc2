import { describe, expect, it } from 'vitest';
import { type AnomalyCheck, checkAnomalies, evaluateAnomalies, type OpenAnomaly } from './anomalies.ts';
import { type Baseline, computeBaseline, type WindowAggregate } from './baselines.ts';
import { TRUST_RULES } from './trust-rules.ts';

const hourly = (latencyMs: number, probesUp = 12, reports = 0, reportSuccesses = 0): WindowAggregate => ({
  latencyMs,
  latencySamples: probesUp,
  probes: 12,
  probesUp,
  reports,
  reportSuccesses,
});

/** 48 steady hours around 100 ms (ln spread 0.1, under the 0.2 floor), every probe up. */
const SELF: Baseline = computeBaseline(
  Array.from({ length: 48 }, (_, h) => hourly(100 * Math.exp(h % 2 === 0 ? 0.1 : -0.1), 12, 20, 18)),
);

/** Six servers of the category with reported success 0.9 ± 0.05. */
const CATEGORY: Baseline = computeBaseline(
  [0.85, 0.9, 0.95, 0.85, 0.9, 0.95].map((rate, i) => ({
    latencyMs: 80 * 2 ** i,
    latencySamples: 100,
    probes: 288,
    probesUp: 280,
    reports: 100,
    reportSuccesses: rate * 100,
  })),
);

const NOW = new Date('2026-05-10T12:00:00Z');
const find = (checks: AnomalyCheck[], metric: string, scope: string) =>
  checks.find((c) => c.metric === metric && c.scope === scope)!;

describe('checkAnomalies', () => {
  it('checks three metrics against both baselines', () => {
    const checks = checkAnomalies(hourly(100), { self: SELF, category: CATEGORY });
    expect(checks.map((c) => `${c.scope}:${c.metric}`)).toEqual([
      'self:latency',
      'self:availability',
      'self:success_rate',
      'category:latency',
      'category:availability',
      'category:success_rate',
    ]);
  });

  it('scores latency on ln(ms) with the stddev floor, by severity', () => {
    const z = (ms: number) =>
      find(checkAnomalies(hourly(ms), { self: SELF, category: null }), 'latency', 'self');
    expect(z(100)).toMatchObject({ status: 'normal', severity: null, baseline_stddev: 0.2 });
    expect(z(100).z).toBeCloseTo(0, 1);
    expect(z(100).baseline_mean).toBeCloseTo(100, 6);
    // ×1.6 is within normal jitter once the floor applies.
    expect(z(160).status).toBe('normal');
    expect(z(200)).toMatchObject({ status: 'anomalous', severity: 'low' });
    expect(z(200).z).toBeCloseTo(Math.log(2) / 0.2, 1);
    expect(z(250)).toMatchObject({ status: 'anomalous', severity: 'medium' });
    expect(z(400)).toMatchObject({ status: 'anomalous', severity: 'high' });
    expect(z(400).detail).toMatch(/^latency 400 ms vs own baseline 100 ms \(z 6\.9 on ln ms, 48 samples\)$/);
  });

  it('does not flag getting faster or more reliable', () => {
    const checks = checkAnomalies(hourly(20, 12, 20, 20), { self: SELF, category: CATEGORY });
    expect(checks.every((c) => c.status === 'normal')).toBe(true);
    expect(find(checks, 'latency', 'self').z!).toBeLessThan(-3);
  });

  it('flags availability drops against a perfect history through the rate floor', () => {
    const at = (up: number) =>
      find(checkAnomalies(hourly(100, up), { self: SELF, category: null }), 'availability', 'self');
    expect(at(12).status).toBe('normal');
    expect(at(9).status).toBe('normal'); // 75 %: z −2.5
    expect(at(8)).toMatchObject({ status: 'anomalous', severity: 'low' }); // 67 %: z −3.3
    expect(at(0)).toMatchObject({ status: 'anomalous', severity: 'high' });
    expect(at(8).baseline_stddev).toBeCloseTo(TRUST_RULES.baseline.stddevFloor.rate, 9);
  });

  it('widens the reported-success spread by the window’s sampling noise', () => {
    const at = (successes: number, reports: number) =>
      find(
        checkAnomalies(
          { ...hourly(100), reports, reportSuccesses: successes },
          { self: null, category: CATEGORY },
        ),
        'success_rate',
        'category',
      );
    const few = at(14, 20);
    expect(few.baseline_stddev).toBeCloseTo(Math.sqrt(0.1 ** 2 + (0.9 * 0.1) / 20), 9);
    expect(few.status).toBe('normal');
    expect(at(10, 20)).toMatchObject({ status: 'anomalous', severity: 'low' });
  });

  it('reports insufficient baselines with their sample count', () => {
    const short = computeBaseline(Array.from({ length: 10 }, () => hourly(100)));
    const check = find(checkAnomalies(hourly(900), { self: short, category: null }), 'latency', 'self');
    expect(check).toMatchObject({
      status: 'insufficient_baseline',
      baseline_samples: 10,
      z: null,
      observed: 900,
    });
    expect(check.detail).toBe('latency: own baseline has 10 samples; needs 24');
    const none = find(
      checkAnomalies(hourly(900), { self: null, category: null }),
      'availability',
      'category',
    );
    expect(none).toMatchObject({ status: 'insufficient_baseline', baseline_samples: 0 });
  });

  it('does not judge a window with too few observations', () => {
    const thin = { ...hourly(900), probes: 2, probesUp: 0, latencySamples: 2 };
    const checks = checkAnomalies(thin, { self: SELF, category: CATEGORY });
    expect(find(checks, 'latency', 'self')).toMatchObject({
      status: 'insufficient_data',
      observation_samples: 2,
    });
    expect(find(checks, 'availability', 'self')).toMatchObject({ status: 'insufficient_data', observed: 0 });
    expect(find(checks, 'success_rate', 'category')).toMatchObject({
      status: 'insufficient_data',
      observed: null,
    });
  });
});

describe('evaluateAnomalies (hysteresis)', () => {
  const baselines = { self: SELF, category: null };
  const step = (previous: OpenAnomaly[], ms: number, now: Date) =>
    evaluateAnomalies(previous, hourly(ms), baselines, now);

  it('opens at z ≥ 3, stays open down to 1.5, clears below it', () => {
    const t = (h: number) => new Date(NOW.getTime() + h * 3_600_000);
    const first = step([], 250, t(0));
    expect(first.opened).toHaveLength(1);
    expect(first.opened[0]).toMatchObject({
      metric: 'latency',
      scope: 'self',
      severity: 'medium',
      detected_at: t(0),
    });

    // z ≈ 2.6: below the opening threshold, but above the clearing one → still open, severity low.
    const second = step(first.opened, 170, t(1));
    expect(second.opened).toEqual([]);
    expect(second.cleared).toEqual([]);
    expect(second.stillOpen).toHaveLength(1);
    expect(second.stillOpen[0]).toMatchObject({ severity: 'low', observed: 170, detected_at: t(0) });

    // z ≈ 1.3 → cleared now.
    const third = step(second.stillOpen, 130, t(2));
    expect(third.stillOpen).toEqual([]);
    expect(third.cleared).toHaveLength(1);
    expect(third.cleared[0]).toMatchObject({ metric: 'latency', detected_at: t(0), cleared_at: t(2) });

    // A fresh excursion opens a new anomaly.
    const fourth = step([], 400, t(3));
    expect(fourth.opened[0]).toMatchObject({ severity: 'high', detected_at: t(3) });
  });

  it('does not open on a value between the thresholds', () => {
    expect(step([], 170, NOW).opened).toEqual([]);
  });

  it('keeps an anomaly open, unchanged, while it cannot be judged', () => {
    const open = step([], 400, NOW).opened;
    const thin = { ...hourly(100), latencySamples: 1 };
    const next = evaluateAnomalies(open, thin, baselines, new Date(NOW.getTime() + 3_600_000));
    expect(next.stillOpen).toEqual(open);
    expect(next.cleared).toEqual([]);
  });

  it('tracks each metric and scope separately', () => {
    const both = evaluateAnomalies([], hourly(400, 6), baselines, NOW);
    expect(both.opened.map((a) => a.metric).sort()).toEqual(['availability', 'latency']);
    const recovered = evaluateAnomalies(both.opened, hourly(400, 12), baselines, NOW);
    expect(recovered.cleared.map((a) => a.metric)).toEqual(['availability']);
    expect(recovered.stillOpen.map((a) => a.metric)).toEqual(['latency']);
  });
});
