import type { ProbeResultRecord } from '@observatory/db';
import { probe } from '@observatory/probe';
import type { JobHandler } from '@observatory/queue';
import { BatchWriter } from '../batch-writer.ts';
import { recordProbe } from '../metrics/process-metrics.ts';
import type { Runtime } from '../runtime.ts';
import { HostLimiter } from './host-limiter.ts';

export interface ProbeJobHandler {
  handle: JobHandler<'probe'>;
  /** Results waiting to be written (metrics). */
  readonly bufferDepth: number;
  /** Writes what is buffered; call before closing the database. */
  drain(): Promise<void>;
}

/**
 * The probe job: probe the server, then hand the result to a batch writer and finish only
 * when the batch is committed. A worker killed mid-batch leaves its jobs unfinished, so they
 * run again; the probe id (server + slot) makes the second write a no-op.
 */
export function createProbeJobHandler(
  runtime: Runtime,
  options: { clock?: () => Date } = {},
): ProbeJobHandler {
  const { config, repos } = runtime;
  const writer = new BatchWriter<ProbeResultRecord>(
    async (records) => {
      await repos.probeResults.insertBatch(records, { intervalSeconds: config.PROBE_INTERVAL_S });
    },
    { maxBatch: 500, maxConcurrent: 2 },
  );
  const hosts = new HostLimiter(config.PROBE_PER_HOST_CONCURRENCY);

  return {
    get bufferDepth() {
      return writer.depth;
    },
    drain: () => writer.drain(),
    async handle(payload, ctx) {
      const host = new URL(payload.url).host;
      const result = await hosts.run(host, () =>
        probe(payload.url, {
          timeoutMs: config.PROBE_TIMEOUT_MS,
          allowPrivateNetworks: config.PROBE_ALLOW_PRIVATE_NETWORKS,
        }),
      );
      recordProbe(result.outcome, result.timings.total_ms);
      // A simulated clock (tests driving time) restamps when the probe happened.
      if (options.clock) result.started_at = options.clock();
      await writer.write({
        probe_id: ctx.jobId,
        server_id: payload.serverId,
        scheduled_at: new Date(payload.slot),
        result,
      });
    },
  };
}
