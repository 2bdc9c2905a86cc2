import type { JobHandlers } from '@observatory/queue';
import { analyzeDirty, recomputeBaselines } from './analysis/analyzer.ts';
import { runMaintenance } from './analysis/maintenance.ts';
import { verifyAuditLog } from './compliance/audit-verification.ts';
import { takeComplianceSnapshots } from './compliance/compliance-snapshots.ts';
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
    maintenance: async (payload) => {
      await runMaintenance(runtime, now());
      await services.receipts.checkpointNow();
      if (payload.reason === 'audit-verification') await verifyAuditLog(runtime, services.receipts);
    },
    compliance: async (payload) => {
      const result = await takeComplianceSnapshots(runtime, payload.day);
      runtime.logger.info({ day: payload.day, ...result }, 'compliance snapshots taken');
    },
  };
  return { handlers, probeJobs };
}
