import { mean, sampleStandardDeviation } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import {
  aggregateWindow,
  computeBaseline,
  computeCategoryBaselines,
  type WindowAggregate,
} from './baselines.ts';
import { CATEGORIES } from './categories.ts';
import { histogramFromSamples } from './latency-histogram.ts';

const w = (
  latencyMs: number | null,
  probes = 12,
  probesUp = 12,
  reports = 0,
  reportSuccesses = 0,
): WindowAggregate => ({
  latencyMs,
  latencySamples: latencyMs === null ? 0 : probesUp,
  probes,
  probesUp,
  reports,
  reportSuccesses,
});

describe('computeBaseline', () => {
  it('summarizes latency on ln(ms) and keeps ms figures for display', () => {
    const latencies = [50, 100, 200, 400, 800];
    const b = computeBaseline(latencies.map((ms) => w(ms)));
    const logs = latencies.map(Math.log);
    expect(b.samples).toBe(5);
    expect(b.latency!.samples).toBe(5);
    expect(b.latency!.log_mean).toBeCloseTo(mean(logs), 12);
    expect(b.latency!.log_stddev).toBeCloseTo(sampleStandardDeviation(logs), 12);
    // Geometric: the middle of a doubling series, where the arithmetic mean is dragged up by the tail.
    expect(b.latency!.geo_mean_ms).toBeCloseTo(200, 9);
    expect(b.latency!.mean_ms).toBeCloseTo(310, 9);
    expect(b.latency!.stddev_ms).toBeCloseTo(sampleStandardDeviation(latencies), 9);
    expect(b.latency!.p50_ms).toBeCloseTo(200, 9);
    expect(b.latency!.p95_ms).toBeGreaterThan(400);
    expect(b.latency!.p95_ms).toBeLessThan(800);
  });

  it('summarizes availability and reported success as rates, skipping windows with too few trials', () => {
    const b = computeBaseline([
      w(100, 10, 10, 4, 3),
      w(100, 10, 8, 10, 10),
      w(null, 2, 0, 2, 0),
      w(null, 0, 0, 0, 0),
    ]);
    expect(b.samples).toBe(4);
    expect(b.latency!.samples).toBe(2);
    expect(b.availability).toEqual({ samples: 2, mean: 0.9, stddev: sampleStandardDeviation([1, 0.8]) });
    expect(b.success_rate!.samples).toBe(2);
    expect(b.success_rate!.mean).toBeCloseTo(0.875, 12);
  });

  it('has a zero spread for a single sample and no figures without data', () => {
    const one = computeBaseline([w(120)]);
    expect(one.latency!.log_stddev).toBe(0);
    expect(one.availability!.stddev).toBe(0);
    expect(computeBaseline([])).toEqual({
      samples: 0,
      latency: null,
      availability: null,
      success_rate: null,
    });
  });
});

describe('aggregateWindow', () => {
  it('sums counts and takes latency from the merged histograms', () => {
    const agg = aggregateWindow([
      {
        probes: 12,
        probesUp: 11,
        reports: 3,
        reportSuccesses: 2,
        latencyHist: histogramFromSamples([100, 110, 120]),
      },
      {
        probes: 12,
        probesUp: 12,
        reports: 0,
        reportSuccesses: 0,
        latencyHist: histogramFromSamples([130, 900]),
      },
    ]);
    expect(agg).toMatchObject({
      probes: 24,
      probesUp: 23,
      reports: 3,
      reportSuccesses: 2,
      latencySamples: 5,
    });
    expect(agg.latencyMs).toBeGreaterThan(117);
    expect(agg.latencyMs).toBeLessThan(123);
    expect(aggregateWindow([]).latencyMs).toBeNull();
  });
});

describe('computeCategoryBaselines', () => {
  it('builds one baseline per category, empty ones included', () => {
    const now = new Date('2026-05-01T00:00:00Z');
    const all = computeCategoryBaselines(
      [
        { category: 'weather', window: w(100) },
        { category: 'weather', window: w(300) },
        { category: 'finance', window: w(50) },
      ],
      now,
    );
    expect(Object.keys(all).sort()).toEqual([...CATEGORIES].sort());
    expect(all.weather).toMatchObject({ category: 'weather', window_days: 7, computed_at: now, samples: 2 });
    expect(all.weather.latency!.geo_mean_ms).toBeCloseTo(Math.sqrt(100 * 300), 9);
    expect(all.finance.samples).toBe(1);
    expect(all.code).toMatchObject({ samples: 0, latency: null, availability: null, success_rate: null });
  });
});
