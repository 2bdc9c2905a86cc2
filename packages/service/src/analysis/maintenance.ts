import type { Runtime } from '../runtime.ts';

const DAY_MS = 86_400_000;

/**
 * Housekeeping, run every minute by whichever worker takes the job: keep a week of probe
 * partitions ahead, drop raw partitions past RETENTION_DAYS (rollups stay), and drop audit data
 * only past AUDIT_RETENTION_DAYS (≥ 6 months; the Merkle tree nodes, leaf hashes included,
 * stay, so the log and every checkpoint remain verifiable after pruning).
 */
export async function runMaintenance(runtime: Runtime, now: Date = new Date()) {
  const { repos, config } = runtime;
  const created = await repos.probeResults.ensurePartitions(
    new Date(now.getTime() - DAY_MS),
    new Date(now.getTime() + 7 * DAY_MS),
  );
  const dropped = await repos.probeResults.dropPartitionsBefore(
    new Date(now.getTime() - config.RETENTION_DAYS * DAY_MS),
  );
  const audit = await repos.audit.pruneBefore(new Date(now.getTime() - config.AUDIT_RETENTION_DAYS * DAY_MS));
  return { partitionsCreated: created, partitionsDropped: dropped, auditRowsPruned: audit.deleted };
}
