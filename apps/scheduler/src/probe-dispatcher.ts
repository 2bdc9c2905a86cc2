import { jobIds } from '@observatory/queue';
import type { Runtime } from '@observatory/service';

export interface DispatchStats {
  claimed: number;
  /** Seconds between a claimed slot and its dispatch (schedule lag), max over the tick. */
  maxLagSeconds: number;
}

/**
 * One scheduling tick: claim every due server (in pages) and enqueue one probe job per server
 * and slot. Job ids are server + slot, so a second scheduler, or a retry of this tick, cannot
 * make the same probe twice. If the queue refuses the jobs (Redis away), the claims are
 * released so the servers stay due instead of waiting a whole interval.
 */
export async function dispatchDueProbes(
  runtime: Runtime,
  now = new Date(),
  pageSize = 500,
): Promise<DispatchStats> {
  const interval = runtime.config.PROBE_INTERVAL_S;
  let claimed = 0;
  let maxLagSeconds = 0;
  for (;;) {
    const due = await runtime.repos.servers.claimDue({
      now,
      limit: pageSize,
      leaseSeconds: interval,
      // up to 10% jitter spreads a fleet registered at once over the interval
      jitterSeconds: interval * 0.1,
    });
    if (due.length === 0) break;
    try {
      await runtime.queue.enqueue(
        'probe',
        due.map((s) => ({
          id: jobIds.probe(s.id, s.slot),
          payload: { serverId: s.id, url: s.url, slot: s.slot.toISOString() },
        })),
      );
    } catch (err) {
      await runtime.repos.servers.releaseClaims(due);
      throw err;
    }
    claimed += due.length;
    for (const s of due) maxLagSeconds = Math.max(maxLagSeconds, (now.getTime() - s.slot.getTime()) / 1000);
    if (due.length < pageSize) break;
  }
  return { claimed, maxLagSeconds };
}
