/**
 * Uptime over fixed windows from rollup buckets: up / conclusive probes (up and degraded count
 * as up, auth_required is left out; see probe-outcome-rules). null when the window holds no
 * conclusive probe — an unknown uptime is not 0 %.
 *
 * Windows are whole buckets ending with the current one: 24 h = the current hour and the 23
 * before it, 7 d = 168 hourly buckets, 30 d = today (UTC) and the 29 days before.
 */

export interface ProbeCountBucket {
  /** Start of the bucket (hour or UTC day). */
  start: Date;
  probes: number;
  up: number;
}

export interface UptimeFigure {
  ratio: number | null;
  probes: number;
  up: number;
}

export interface UptimeWindows {
  uptime_24h: UptimeFigure;
  uptime_7d: UptimeFigure;
  uptime_30d: UptimeFigure;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Sums the buckets whose start lies in [from, to). */
export function uptimeBetween(buckets: readonly ProbeCountBucket[], from: Date, to: Date): UptimeFigure {
  let probes = 0;
  let up = 0;
  for (const b of buckets) {
    const t = b.start.getTime();
    if (t >= from.getTime() && t < to.getTime()) {
      probes += b.probes;
      up += b.up;
    }
  }
  return { ratio: probes > 0 ? Math.round((up / probes) * 10_000) / 10_000 : null, probes, up };
}

/** Start of the UTC hour (or day) holding `t`. */
function floorTo(t: Date, unitMs: number): number {
  return Math.floor(t.getTime() / unitMs) * unitMs;
}

export function uptimeWindows(input: {
  hourly: readonly ProbeCountBucket[];
  daily: readonly ProbeCountBucket[];
  now: Date;
}): UptimeWindows {
  const nextHour = new Date(floorTo(input.now, HOUR_MS) + HOUR_MS);
  const nextDay = new Date(floorTo(input.now, DAY_MS) + DAY_MS);
  return {
    uptime_24h: uptimeBetween(input.hourly, new Date(nextHour.getTime() - 24 * HOUR_MS), nextHour),
    uptime_7d: uptimeBetween(input.hourly, new Date(nextHour.getTime() - 168 * HOUR_MS), nextHour),
    uptime_30d: uptimeBetween(input.daily, new Date(nextDay.getTime() - 30 * DAY_MS), nextDay),
  };
}
