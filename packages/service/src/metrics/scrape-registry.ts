import { Gauge, Histogram, Registry } from 'prom-client';
import type { Runtime } from '../runtime.ts';
import { enableDefaultMetrics, processRegistry } from './process-metrics.ts';

export interface ScrapeRegistry {
  /** API request durations; the HTTP layer observes every response. */
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
  contentType: string;
  /** The Prometheus text of this process: its own work plus the gauges read at scrape time. */
  render(): Promise<string>;
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * The registry behind one /metrics endpoint. Gauges of shared state are read when Prometheus
 * scrapes, never on a timer: queue depths come from `runtime.queue.counts()` (Redis in
 * distributed mode, so every API replica reports the whole fleet's queues) and the report
 * buffer from the ingest service.
 */
export function createScrapeRegistry(
  runtime: Runtime,
  sources: { reportBufferDepth?: () => number } = {},
): ScrapeRegistry {
  const registry = new Registry();

  const httpRequestDuration = new Histogram({
    name: 'observatory_http_request_duration_seconds',
    help: 'API request durations, by route pattern and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  const queueUp = new Gauge({
    name: 'observatory_queue_up',
    help: '1 when the job queue answered the last scrape, 0 when it could not be read',
    registers: [registry],
  });

  const queueJobs = new Gauge({
    name: 'observatory_queue_jobs',
    help: 'Jobs per queue and state (waiting, active, delayed, failed), read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
  });

  /** Reads the queue depths once per scrape, for both queue gauges. */
  async function readQueues(): Promise<void> {
    queueJobs.reset();
    try {
      const counts = await runtime.queue.counts();
      for (const [queue, c] of Object.entries(counts)) {
        for (const state of QUEUE_STATES) queueJobs.labels(queue, state).set(c[state]);
      }
      queueUp.set(1);
    } catch (err) {
      // Redis away: say so with queue_up 0 instead of failing the whole scrape.
      runtime.logger.debug({ err }, 'queue counts unavailable for /metrics');
      queueUp.set(0);
    }
  }

  if (sources.reportBufferDepth) {
    const depth = sources.reportBufferDepth;
    new Gauge({
      name: 'observatory_report_ingest_buffer_depth',
      help: 'Agent reports accepted and waiting for their batch to be written',
      registers: [registry],
      collect() {
        this.set(depth());
      },
    });
  }

  return {
    httpRequestDuration,
    contentType: registry.contentType,
    async render() {
      enableDefaultMetrics();
      await readQueues();
      return `${await processRegistry.metrics()}\n${await registry.metrics()}`;
    },
  };
}
