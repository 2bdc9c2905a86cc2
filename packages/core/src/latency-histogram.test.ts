import { describe, expect, it } from 'vitest';
import {
  bucketBounds,
  bucketIndex,
  bucketValue,
  EMPTY_HISTOGRAM,
  HISTOGRAM_LAYOUT,
  histogramAdd,
  histogramCount,
  histogramFromSamples,
  histogramMean,
  histogramMerge,
  histogramQuantile,
  mergeHistograms,
  parseLatencyHistogram,
  summarizeHistogram,
} from './latency-histogram.ts';
import { seededRandom } from './seeded-random.test-support.ts';

/** Log-normal latencies (median ≈ e^mu ms), reproducible. */
function logNormalSamples(n: number, seed: number, mu = Math.log(150), sigma = 0.8): number[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => {
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    return Math.exp(mu + sigma * normal);
  });
}

/** The nearest-rank quantile the histogram approximates. */
function exactQuantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

const TOLERANCE = HISTOGRAM_LAYOUT.maxRelativeError + 1e-9;

describe('bucket layout', () => {
  it('has 310 buckets: sub-millisecond, 16 per doubling up to ~623 s, overflow', () => {
    expect(HISTOGRAM_LAYOUT.bucketCount).toBe(310);
    expect(HISTOGRAM_LAYOUT.overflowFromMs).toBeCloseTo(623_487, 0);
    expect(HISTOGRAM_LAYOUT.maxRelativeError).toBeCloseTo(0.0219, 4);
    expect(bucketIndex(0)).toBe(0);
    expect(bucketIndex(0.999)).toBe(0);
    expect(bucketIndex(1)).toBe(1);
    expect(bucketIndex(2)).toBe(17);
    expect(bucketIndex(600_000)).toBe(308);
    expect(bucketIndex(700_000)).toBe(309);
    expect(bucketIndex(Infinity)).toBe(309);
  });

  it('puts every value inside its bucket and reads it back within 2.2 %', () => {
    for (const ms of [1, 1.5, 3, 17, 99.9, 100, 250, 1234.5, 9999, 60_000, 599_999]) {
      const i = bucketIndex(ms);
      const { lowerMs, upperMs } = bucketBounds(i);
      expect(ms).toBeGreaterThanOrEqual(lowerMs * (1 - 1e-12));
      expect(ms).toBeLessThan(upperMs * (1 + 1e-12));
      expect(Math.abs(bucketValue(i) - ms) / ms).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(bucketBounds(0)).toEqual({ lowerMs: 0, upperMs: 1 });
    expect(bucketBounds(309).upperMs).toBe(Infinity);
    expect(bucketValue(309)).toBe(HISTOGRAM_LAYOUT.overflowFromMs);
  });

  it('rejects negative and NaN latencies', () => {
    expect(() => bucketIndex(-1)).toThrow(RangeError);
    expect(() => bucketIndex(Number.NaN)).toThrow(RangeError);
    expect(() => histogramAdd(EMPTY_HISTOGRAM, -5)).toThrow(RangeError);
  });
});

describe('building and merging', () => {
  it('stores sparse ascending [bucket, count] pairs', () => {
    const h = histogramFromSamples([100, 100, 5, 100_000]);
    expect(h).toEqual([bucketIndex(5), 1, bucketIndex(100), 2, bucketIndex(100_000), 1]);
    expect(histogramCount(h)).toBe(4);
    expect(parseLatencyHistogram(JSON.parse(JSON.stringify(h)))).toEqual(h);
  });

  it('adds one sample at a time like building at once', () => {
    const samples = logNormalSamples(500, 1);
    let h = EMPTY_HISTOGRAM;
    for (const ms of samples) h = histogramAdd(h, ms);
    expect(h).toEqual(histogramFromSamples(samples));
    expect(histogramAdd(EMPTY_HISTOGRAM, 42, 3)).toEqual([bucketIndex(42), 3]);
    expect(() => histogramAdd(EMPTY_HISTOGRAM, 42, 0)).toThrow(RangeError);
  });

  it('merges exactly: merge(a, b) is the histogram of both sample sets', () => {
    const a = logNormalSamples(300, 2);
    const b = logNormalSamples(200, 3, Math.log(2000), 1.2);
    const merged = histogramMerge(histogramFromSamples(a), histogramFromSamples(b));
    expect(merged).toEqual(histogramFromSamples([...a, ...b]));
    expect(histogramMerge(histogramFromSamples(b), histogramFromSamples(a))).toEqual(merged);
    expect(histogramMerge(merged, EMPTY_HISTOGRAM)).toEqual(merged);
    expect(histogramMerge(EMPTY_HISTOGRAM, merged)).toEqual(merged);
  });

  it('folds 720 hourly histograms into the histogram of the whole window', () => {
    const hours = Array.from({ length: 720 }, (_, h) =>
      logNormalSamples(12, 100 + h, Math.log(100 + (h % 24) * 10)),
    );
    const merged = mergeHistograms(hours.map(histogramFromSamples));
    const all = hours.flat();
    expect(merged).toEqual(histogramFromSamples(all));
    expect(histogramCount(merged)).toBe(720 * 12);
    for (const q of [0.5, 0.95, 0.99]) {
      const exact = exactQuantile(all, q);
      expect(Math.abs(histogramQuantile(merged, q)! - exact) / exact).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(mergeHistograms([])).toEqual(EMPTY_HISTOGRAM);
  });
});

describe('reading figures back', () => {
  it('gives p50/p95/p99 within the layout error of the exact nearest-rank quantiles', () => {
    for (const seed of [7, 8, 9]) {
      const samples = logNormalSamples(5000, seed);
      const h = histogramFromSamples(samples);
      for (const q of [0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1]) {
        const exact = exactQuantile(samples, q);
        expect(Math.abs(histogramQuantile(h, q)! - exact) / exact).toBeLessThanOrEqual(TOLERANCE);
      }
    }
  });

  it('estimates the mean within the layout error', () => {
    const samples = logNormalSamples(5000, 11);
    const exact = samples.reduce((s, x) => s + x, 0) / samples.length;
    const estimate = histogramMean(histogramFromSamples(samples))!;
    expect(Math.abs(estimate - exact) / exact).toBeLessThanOrEqual(TOLERANCE);
  });

  it('summarizes, and has no figures when empty', () => {
    const s = summarizeHistogram(histogramFromSamples([10, 20, 30, 40, 1000]));
    expect(s.count).toBe(5);
    expect(s.p50_ms).toBeCloseTo(30, -0.5);
    expect(s.p99_ms).toBeCloseTo(1000, -1.5);
    expect(summarizeHistogram(EMPTY_HISTOGRAM)).toEqual({
      count: 0,
      mean_ms: null,
      p50_ms: null,
      p95_ms: null,
      p99_ms: null,
    });
    expect(() => histogramQuantile(EMPTY_HISTOGRAM, 1.5)).toThrow(RangeError);
  });
});

describe('parseLatencyHistogram', () => {
  it('accepts the empty array and well-formed pairs', () => {
    expect(parseLatencyHistogram([])).toEqual([]);
    expect(parseLatencyHistogram([0, 1, 309, 5])).toEqual([0, 1, 309, 5]);
  });

  it.each([
    ['not an array', { a: 1 }],
    ['odd length', [1, 2, 3]],
    ['bucket out of range', [310, 1]],
    ['negative bucket', [-1, 1]],
    ['fractional bucket', [1.5, 1]],
    ['zero count', [3, 0]],
    ['descending buckets', [5, 1, 4, 1]],
    ['repeated bucket', [5, 1, 5, 1]],
    ['string values', ['5', '1']],
  ])('rejects %s', (_label, value) => {
    expect(() => parseLatencyHistogram(value)).toThrow(TypeError);
  });
});
