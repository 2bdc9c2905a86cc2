/**
 * Mergeable latency histograms with fixed log-spaced buckets.
 *
 * Layout (never change it without migrating stored data — every stored histogram is read with it):
 * - bucket 0 holds [0, 1) ms;
 * - bucket k, for k = 1 … 308, holds [2^((k-1)/16), 2^(k/16)) ms: 16 buckets per doubling, so
 *   bucket 308 ends at 2^19.25 ≈ 623,487 ms, just past the 600,000 ms (10 min) we care about;
 * - bucket 309 holds everything from there up (overflow).
 * A bucket is reported as its geometric midpoint, so any value read back is within
 * 2^(1/32) − 1 ≈ 2.2 % of a real sample in the same bucket.
 *
 * Representation: a sparse integer array `[bucket, count, bucket, count, …]` with ascending
 * bucket indices and positive counts. It is the stored form too (Postgres `integer[]` /
 * JSON), so a row read back is used as is. A server's hourly histogram has a handful of
 * non-zero buckets, so a row costs tens of integers instead of 310.
 */

const BUCKETS_PER_OCTAVE = 16;
const LAST_FINITE_BUCKET = 308;
const OVERFLOW_BUCKET = LAST_FINITE_BUCKET + 1;

export const HISTOGRAM_LAYOUT = Object.freeze({
  bucketsPerOctave: BUCKETS_PER_OCTAVE,
  /** Number of buckets, underflow and overflow included. */
  bucketCount: OVERFLOW_BUCKET + 1,
  /** Values at or above this land in the overflow bucket and read back as this value. */
  overflowFromMs: 2 ** (LAST_FINITE_BUCKET / BUCKETS_PER_OCTAVE),
  /** Worst relative error of a value read back from a finite bucket ≥ 1 ms. */
  maxRelativeError: 2 ** (1 / (2 * BUCKETS_PER_OCTAVE)) - 1,
});

/** Sparse `[bucket, count, …]`, buckets ascending, counts > 0. `[]` is the empty histogram. */
export type LatencyHistogram = readonly number[];

export const EMPTY_HISTOGRAM: LatencyHistogram = Object.freeze([]);

function assertLatency(ms: number): void {
  if (!(ms >= 0)) throw new RangeError(`latency must be a number ≥ 0 ms, got ${ms}`);
}

/** The bucket a latency (ms, ≥ 0) falls into. */
export function bucketIndex(ms: number): number {
  assertLatency(ms);
  if (ms < 1) return 0;
  const k = Math.floor(Math.log2(ms) * BUCKETS_PER_OCTAVE) + 1;
  return Math.min(k, OVERFLOW_BUCKET);
}

/** The value a bucket reads back as: its geometric midpoint (overflow: its lower edge). */
export function bucketValue(index: number): number {
  if (index === 0) return 0.5;
  if (index >= OVERFLOW_BUCKET) return HISTOGRAM_LAYOUT.overflowFromMs;
  return 2 ** ((index - 0.5) / BUCKETS_PER_OCTAVE);
}

/** [lowerMs, upperMs) of a bucket; the overflow bucket's upper edge is Infinity. */
export function bucketBounds(index: number): { lowerMs: number; upperMs: number } {
  if (index === 0) return { lowerMs: 0, upperMs: 1 };
  if (index >= OVERFLOW_BUCKET) return { lowerMs: HISTOGRAM_LAYOUT.overflowFromMs, upperMs: Infinity };
  return {
    lowerMs: 2 ** ((index - 1) / BUCKETS_PER_OCTAVE),
    upperMs: 2 ** (index / BUCKETS_PER_OCTAVE),
  };
}

function denseToSparse(dense: Float64Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < dense.length; i++) {
    const c = dense[i]!;
    if (c > 0) out.push(i, c);
  }
  return out;
}

/** A histogram of many samples at once (cheaper than adding them one by one). */
export function histogramFromSamples(samplesMs: Iterable<number>): LatencyHistogram {
  const dense = new Float64Array(HISTOGRAM_LAYOUT.bucketCount);
  for (const ms of samplesMs) dense[bucketIndex(ms)]! += 1;
  return denseToSparse(dense);
}

/** A new histogram with `count` more samples of `ms`. */
export function histogramAdd(hist: LatencyHistogram, ms: number, count = 1): LatencyHistogram {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer`);
  const b = bucketIndex(ms);
  const out: number[] = [];
  let placed = false;
  for (let i = 0; i < hist.length; i += 2) {
    const bucket = hist[i]!;
    const c = hist[i + 1]!;
    if (!placed && bucket >= b) {
      placed = true;
      if (bucket === b) {
        out.push(bucket, c + count);
        continue;
      }
      out.push(b, count);
    }
    out.push(bucket, c);
  }
  if (!placed) out.push(b, count);
  return out;
}

/** The histogram of the union of two sample sets (a two-way merge of the sparse arrays). */
export function histogramMerge(a: LatencyHistogram, b: LatencyHistogram): LatencyHistogram {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ba = a[i]!;
    const bb = b[j]!;
    if (ba === bb) {
      out.push(ba, a[i + 1]! + b[j + 1]!);
      i += 2;
      j += 2;
    } else if (ba < bb) {
      out.push(ba, a[i + 1]!);
      i += 2;
    } else {
      out.push(bb, b[j + 1]!);
      j += 2;
    }
  }
  for (; i < a.length; i += 2) out.push(a[i]!, a[i + 1]!);
  for (; j < b.length; j += 2) out.push(b[j]!, b[j + 1]!);
  return out;
}

/**
 * Merges any number of histograms in one pass over a dense accumulator — the way to fold a
 * window of hourly rows (720 for 30 days) into one histogram.
 */
export function mergeHistograms(hists: readonly LatencyHistogram[]): LatencyHistogram {
  const dense = new Float64Array(HISTOGRAM_LAYOUT.bucketCount);
  for (const h of hists) {
    for (let i = 0; i < h.length; i += 2) dense[h[i]!]! += h[i + 1]!;
  }
  return denseToSparse(dense);
}

export function histogramCount(hist: LatencyHistogram): number {
  let n = 0;
  for (let i = 1; i < hist.length; i += 2) n += hist[i]!;
  return n;
}

/**
 * The q-quantile (0 ≤ q ≤ 1) by nearest rank: the bucket holding the ⌈q·n⌉-th smallest sample,
 * read back as its midpoint. null for an empty histogram.
 */
export function histogramQuantile(hist: LatencyHistogram, q: number): number | null {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile must be within [0, 1], got ${q}`);
  const n = histogramCount(hist);
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(q * n));
  let seen = 0;
  for (let i = 0; i < hist.length; i += 2) {
    seen += hist[i + 1]!;
    if (seen >= rank) return bucketValue(hist[i]!);
  }
  return bucketValue(hist[hist.length - 2]!);
}

/**
 * Mean estimated from bucket midpoints (each sample within ~2.2 %). Rollups that also keep an
 * exact latency sum should divide that by the count instead.
 */
export function histogramMean(hist: LatencyHistogram): number | null {
  let n = 0;
  let sum = 0;
  for (let i = 0; i < hist.length; i += 2) {
    n += hist[i + 1]!;
    sum += hist[i + 1]! * bucketValue(hist[i]!);
  }
  return n === 0 ? null : sum / n;
}

export interface HistogramSummary {
  count: number;
  mean_ms: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
}

export function summarizeHistogram(hist: LatencyHistogram): HistogramSummary {
  return {
    count: histogramCount(hist),
    mean_ms: histogramMean(hist),
    p50_ms: histogramQuantile(hist, 0.5),
    p95_ms: histogramQuantile(hist, 0.95),
    p99_ms: histogramQuantile(hist, 0.99),
  };
}

/**
 * Checks a value read from storage (or the network) and returns it as a histogram; throws a
 * TypeError naming the defect otherwise.
 */
export function parseLatencyHistogram(value: unknown): LatencyHistogram {
  if (!Array.isArray(value)) throw new TypeError('latency histogram must be an array');
  if (value.length % 2 !== 0) throw new TypeError('latency histogram must hold [bucket, count] pairs');
  let previous = -1;
  for (let i = 0; i < value.length; i += 2) {
    const bucket: unknown = value[i];
    const count: unknown = value[i + 1];
    if (!Number.isInteger(bucket) || (bucket as number) < 0 || (bucket as number) > OVERFLOW_BUCKET) {
      throw new TypeError(`latency histogram: bad bucket index at position ${i}`);
    }
    if ((bucket as number) <= previous) {
      throw new TypeError(`latency histogram: bucket indices must ascend (position ${i})`);
    }
    if (!Number.isInteger(count) || (count as number) < 1) {
      throw new TypeError(`latency histogram: bad count at position ${i + 1}`);
    }
    previous = bucket as number;
  }
  return value as number[];
}
