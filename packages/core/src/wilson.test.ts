import { describe, expect, it } from 'vitest';
import { wilsonInterval, wilsonLowerBound } from './wilson.ts';

describe('wilsonInterval', () => {
  it('does not call 3 of 3 perfect', () => {
    const lower = wilsonLowerBound(3, 3);
    expect(lower).toBeCloseTo(3 / (3 + 1.96 ** 2), 10);
    expect(lower).toBeCloseTo(0.4385, 4);
  });

  it('matches an independent computation for 81 of 263', () => {
    const { lower, upper } = wilsonInterval(81, 263);
    expect(lower).toBeCloseTo(0.2553, 3);
    expect(upper).toBeCloseTo(0.3662, 3);
  });

  it('tightens with more trials at the same ratio', () => {
    expect(wilsonLowerBound(10, 10)).toBeLessThan(wilsonLowerBound(100, 100));
    expect(wilsonLowerBound(7, 10)).toBeLessThan(wilsonLowerBound(700, 1000));
    expect(wilsonLowerBound(700, 1000)).toBeLessThan(0.7);
  });

  it('widens with a larger z', () => {
    expect(wilsonLowerBound(9, 10, 2.576)).toBeLessThan(wilsonLowerBound(9, 10, 1.96));
  });

  it('is [0, 1] with no trials and stays within [0, 1]', () => {
    expect(wilsonInterval(0, 0)).toEqual({ lower: 0, upper: 1 });
    const none = wilsonInterval(0, 50);
    expect(none.lower).toBe(0);
    expect(none.upper).toBeGreaterThan(0);
    expect(wilsonInterval(50, 50).upper).toBe(1);
  });

  it('accepts fractional (weighted) counts', () => {
    expect(wilsonLowerBound(4.5, 5)).toBeGreaterThan(wilsonLowerBound(4, 5));
  });

  it('rejects impossible counts', () => {
    expect(() => wilsonInterval(4, 3)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 3)).toThrow(RangeError);
    expect(() => wilsonInterval(1, Number.NaN)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, 0)).toThrow(RangeError);
  });
});
