import { createJobHandlers, type Services } from '@observatory/service';

/**
 * The worker: consumes probe jobs (PROBE_CONCURRENCY at once) and the periodic analysis and
 * housekeeping jobs. On shutdown the queue stops taking jobs and lets active ones finish within
 * the grace period; results still buffered are then written before the database closes.
 */
export async function startWorker(services: Services): Promise<void> {
  const { runtime } = services;
  const { handlers, probeJobs } = createJobHandlers(services);
  runtime.beforeDatabaseClose(() => probeJobs.drain());
  await runtime.queue.consume(handlers, {
    probe: runtime.config.PROBE_CONCURRENCY,
    analyze: 1,
    baselines: 1,
    maintenance: 1,
  });
}
