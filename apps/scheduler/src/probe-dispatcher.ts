import { jobIds } from '@observatory/queue';
import type { Runtime } from '@observatory/service';

export interface DispatchStats {
  claimed: number;
  /** Probe jobs already waiting when the tick began. */
  backlog: number;
  /** True when the backlog cap held claims back (servers stay due: the fleet is saturated). */
  throttled: boolean;
  /** Seconds between a claimed slot and its dispatch (schedule lag), max over the tick. */
  maxLagSeconds: number;
}

/**
 * One scheduling tick: claim every due server (in pages) and enqueue one probe job per server
 * and slot. Job ids are server + slot, so a second scheduler, or a retry of this tick, cannot
 * make the same probe twice. If the queue refuses the jobs (Redis away), the claims are
 * released so the servers stay due instead of waiting a whole interval.
 *
 * Backpressure: no more than PROBE_MAX_BACKLOG jobs may wait. A claim is a lease of one
 * interval, so without the cap a saturated fleet would enqueue a new job for every server each
 * interval on top of the ones still waiting, and the queue would grow without bound.
 */
export async function dispatchDueProbes(
  runtime: Runtime,
  now = new Date(),
  pageSize = 500,
): Promise<DispatchStats> {
  const interval = runtime.config.PROBE_INTERVAL_S;
  let claimed = 0;
  let maxLagSeconds = 0;
  const backlog = await runtime.queue.backlog('probe');
  let room = Math.max(0, runtime.config.PROBE_MAX_BACKLOG - backlog);
  while (room > 0) {
    const limit = Math.min(pageSize, room);
    const due = await runtime.repos.servers.claimDue({
      now,
      limit,
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
    room -= due.length;
    for (const s of due) maxLagSeconds = Math.max(maxLagSeconds, (now.getTime() - s.slot.getTime()) / 1000);
    if (due.length < limit) break;
  }
  return { claimed, maxLagSeconds, backlog, throttled: room === 0 };
}
