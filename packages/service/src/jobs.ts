import type { JobHandlers } from '@observatory/queue';
import { analyzeDirty, recomputeBaselines } from './analysis/analyzer.ts';
import { runMaintenance } from './analysis/maintenance.ts';
import { createProbeJobHandler } from './probing/probe.job.ts';
import type { Services } from './services.ts';

/**
 * The handlers of every background job, for whichever queue runs them (BullMQ workers or the
 * in-process dispatcher). `drain` writes what the probe writer still buffers.
 */
export function createJobHandlers(services: Services, options: { clock?: () => Date } = {}) {
  const { runtime } = services;
  const probeJobs = createProbeJobHandler(runtime, options);
  const now = options.clock ?? (() => new Date());
  const handlers: JobHandlers = {
    probe: probeJobs.handle,
    analyze: async () => {
      await analyzeDirty(runtime.db.sql, now());
    },
    baselines: async () => {
      await recomputeBaselines(runtime.db.sql, now());
    },
    maintenance: async () => {
      await runMaintenance(runtime, now());
      await services.receipts.checkpointNow();
    },
  };
  return { handlers, probeJobs };
}
