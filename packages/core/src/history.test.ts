import { describe, expect, it } from 'vitest';
import { buildHistory, type DailyRollup, scoreTrend, utcDay } from './history.ts';

const NOW = new Date('2026-05-31T10:30:00Z');
const day = (ago: number) => utcDay(new Date(NOW.getTime() - ago * 86_400_000));

function rollup(ago: number, trustScore: number | null, extra: Partial<DailyRollup> = {}): DailyRollup {
  return {
    day: day(ago),
    probes: 288,
    probesUp: 288,
    reports: 12,
    reportSuccesses: 9,
    latencySumMs: 300 * 150,
    latencyCount: 300,
    trustScore,
    ...extra,
  };
}

describe('buildHistory', () => {
  it('returns one row per day for the last N days, oldest first, holes included', () => {
    const { days } = buildHistory([rollup(0, 90), rollup(2, 80, { probesUp: 144 })], NOW, 5);
    expect(days.map((d) => d.date)).toEqual([day(4), day(3), day(2), day(1), day(0)]);
    expect(days[4]).toEqual({
      date: day(0),
      calls: 300,
      probes: 288,
      reports: 12,
      success_rate: Math.round((297 / 300) * 1e4) / 1e4,
      avg_latency_ms: 150,
      uptime: 1,
      trust_score: 90,
    });
    expect(days[2]!.uptime).toBe(0.5);
    expect(days[3]).toEqual({
      date: day(1),
      calls: 0,
      probes: 0,
      reports: 0,
      success_rate: null,
      avg_latency_ms: null,
      uptime: null,
      trust_score: null,
    });
  });

  it('defaults to 30 days and ignores rollups outside them', () => {
    const { days } = buildHistory([rollup(0, 90), rollup(45, 10)], NOW);
    expect(days).toHaveLength(30);
    expect(days.filter((d) => d.calls > 0)).toHaveLength(1);
  });

  it('reports the trend of the trust score', () => {
    const series = (f: (ago: number) => number) =>
      Array.from({ length: 30 }, (_, ago) => rollup(ago, f(ago)));
    expect(
      buildHistory(
        series((ago) => 90 - ago),
        NOW,
      ).trend,
    ).toBe('improving');
    expect(
      buildHistory(
        series((ago) => 50 + ago),
        NOW,
      ).trend,
    ).toBe('declining');
    expect(
      buildHistory(
        series((ago) => 80 + (ago % 2)),
        NOW,
      ).trend,
    ).toBe('stable');
    expect(buildHistory(series(() => 80).slice(0, 6), NOW).trend).toBe('insufficient_data');
  });
});

describe('scoreTrend', () => {
  it('skips days without a score and needs a week of them', () => {
    expect(scoreTrend([10, null, 20, null, 30, null, 40, null, 50, null, 60, null, 70])).toBe('improving');
    expect(scoreTrend([10, null, 20, null, 30, null])).toBe('insufficient_data');
    expect(scoreTrend([80, 80.2, 80.4, 80.6, 80.8, 81, 81.2])).toBe('stable');
  });
});
