import { describe, expect, it } from 'vitest';
import { type ProbeCountBucket, uptimeBetween, uptimeWindows } from './uptime.ts';

const H = 3_600_000;
const NOW = new Date('2026-05-31T10:30:00Z');
const hourStart = Math.floor(NOW.getTime() / H) * H;

/** Hourly buckets for the last `hours` hours (current one included), 12 probes each. */
function hourly(hours: number, upAt: (hoursAgo: number) => number): ProbeCountBucket[] {
  return Array.from({ length: hours }, (_, ago) => ({
    start: new Date(hourStart - ago * H),
    probes: 12,
    up: upAt(ago),
  }));
}

describe('uptimeBetween', () => {
  it('sums buckets starting inside [from, to)', () => {
    const buckets = hourly(3, () => 6);
    expect(uptimeBetween(buckets, new Date(hourStart - H), new Date(hourStart + H))).toEqual({
      ratio: 0.5,
      probes: 24,
      up: 12,
    });
  });

  it('is null, not zero, without probes', () => {
    expect(uptimeBetween([], new Date(0), NOW)).toEqual({ ratio: null, probes: 0, up: 0 });
  });
});

describe('uptimeWindows', () => {
  it('computes 24 h and 7 d from hourly buckets and 30 d from daily ones', () => {
    // Down for the whole of the day before yesterday (hours 48..71 ago), up otherwise.
    const hours = hourly(24 * 10, (ago) => (ago >= 48 && ago < 72 ? 0 : 12));
    const dayStart = Math.floor(NOW.getTime() / (24 * H)) * 24 * H;
    const daily: ProbeCountBucket[] = Array.from({ length: 40 }, (_, ago) => ({
      start: new Date(dayStart - ago * 24 * H),
      probes: 288,
      up: ago < 30 && ago % 10 === 0 ? 0 : 288,
    }));
    const u = uptimeWindows({ hourly: hours, daily, now: NOW });
    expect(u.uptime_24h).toEqual({ ratio: 1, probes: 288, up: 288 });
    expect(u.uptime_7d.probes).toBe(168 * 12);
    expect(u.uptime_7d.ratio).toBeCloseTo(1 - 24 / 168, 4);
    // Days 0, 10 and 20 ago were down; day 30 ago is outside the window.
    expect(u.uptime_30d.probes).toBe(30 * 288);
    expect(u.uptime_30d.ratio).toBeCloseTo(0.9, 4);
  });
});
