import { createProbeJobHandler, type Runtime } from '@observatory/service';

/**
 * The worker: consumes probe jobs (PROBE_CONCURRENCY at once). On shutdown the queue stops
 * taking jobs and lets active ones finish within the grace period; results still buffered
 * are then written before the database closes.
 */
export async function startWorker(runtime: Runtime): Promise<void> {
  const probeJobs = createProbeJobHandler(runtime);
  runtime.beforeDatabaseClose(() => probeJobs.drain());
  await runtime.queue.consume({ probe: probeJobs.handle }, { probe: runtime.config.PROBE_CONCURRENCY });
}
