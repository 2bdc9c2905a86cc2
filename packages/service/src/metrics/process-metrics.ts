import { PROBE_OUTCOMES, type ProbeOutcome } from '@observatory/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * What THIS process did: the probes it ran and the scheduling ticks it made. The code that does
 * the work records here (one call each), whichever app it runs in; whoever exposes /metrics in
 * this process renders it. In embedded mode that is one process with everything; in
 * distributed mode each process holds its own share (see README "Metrics").
 */
export const processRegistry = new Registry();

const probes = new Counter({
  name: 'observatory_probes_total',
  help: 'Probes run by this process, by outcome',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});

const probeDuration = new Histogram({
  name: 'observatory_probe_duration_seconds',
  help: 'Wall time of one probe (the whole MCP handshake), by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [processRegistry],
});

const schedulerLag = new Gauge({
  name: 'observatory_scheduler_lag_seconds',
  help: 'Largest delay between a probe slot falling due and its dispatch, over the last scheduler tick',
  registers: [processRegistry],
});

const dispatched = new Counter({
  name: 'observatory_scheduler_dispatched_total',
  help: 'Probe jobs dispatched by this scheduler',
  registers: [processRegistry],
});

const probeBacklog = new Gauge({
  name: 'observatory_probe_backlog',
  help: 'Probe jobs waiting for a worker when the last scheduler tick began (scale workers on it)',
  registers: [processRegistry],
});

const throttledTicks = new Counter({
  name: 'observatory_scheduler_throttled_ticks_total',
  help: 'Scheduler ticks that left due servers unclaimed because the probe backlog was at PROBE_MAX_BACKLOG',
  registers: [processRegistry],
});

const ticks = new Counter({
  name: 'observatory_scheduler_ticks_total',
  help: 'Scheduler ticks that claimed and dispatched their due servers',
  registers: [processRegistry],
});

// Every outcome is a series from the start, so a rate() over "not_mcp" reads 0, not "no data".
for (const outcome of PROBE_OUTCOMES) {
  probes.labels(outcome).inc(0);
}

/** Records one finished probe. */
export function recordProbe(outcome: ProbeOutcome, totalMs: number): void {
  probes.labels(outcome).inc();
  probeDuration.labels(outcome).observe(totalMs / 1000);
}

/** Records one scheduler tick: how many probes it dispatched and how late the latest slot was. */
export function recordSchedulerTick(stats: {
  claimed: number;
  maxLagSeconds: number;
  backlog: number;
  throttled: boolean;
}): void {
  ticks.inc();
  dispatched.inc(stats.claimed);
  schedulerLag.set(stats.maxLagSeconds);
  probeBacklog.set(stats.backlog);
  if (stats.throttled) throttledTicks.inc();
}

let defaultsOn = false;

/** Node's own metrics (CPU, memory, event-loop lag, GC), switched on by the first scrape. */
export function enableDefaultMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: processRegistry });
}
