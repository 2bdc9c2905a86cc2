import { jobIds } from '@observatory/queue';
import { type Runtime, recordSchedulerTick } from '@observatory/service';
import cron from 'node-cron';
import { dispatchDueProbes } from './probe-dispatcher.ts';

export interface Scheduler {
  /** Runs one tick now (tests and `--once`). */
  tick(): Promise<void>;
  close(): Promise<void>;
}

export interface SchedulerOptions {
  tickMs?: number;
}

/** Periodic jobs: one per period whatever the number of schedulers (ids are per period). */
const PERIODIC = [
  // folds new results into rollups and verdicts: a probe is in the score within seconds
  { name: 'analyze', key: 'analyze', reason: 'schedule', periodMs: 1_000 },
  { name: 'baselines', key: 'baselines', reason: 'schedule', periodMs: 5 * 60_000 },
  // partitions, retention, a signed audit checkpoint
  { name: 'maintenance', key: 'maintenance', reason: 'schedule', periodMs: 60_000 },
  // the audit log's consistency check: recompute every leaf and the root
  { name: 'maintenance', key: 'audit-verification', reason: 'audit-verification', periodMs: 3_600_000 },
] as const;

const DAY_MS = 86_400_000;
const utcDay = (t: Date) => t.toISOString().slice(0, 10);

/** The day that just ended gets its compliance snapshot; the job id makes it one per day. */
export async function enqueueComplianceSnapshot(runtime: Runtime, now: Date = new Date()) {
  const day = utcDay(new Date(now.getTime() - DAY_MS));
  await runtime.queue.enqueue('compliance', [{ id: jobIds.compliance(day), payload: { day } }]);
  return day;
}

/**
 * The scheduler process: every tick, due servers become probe jobs, and the periodic jobs of
 * the period are enqueued. Any number of schedulers may run; SKIP LOCKED claims and
 * deterministic job ids make duplicates harmless.
 */
export function startScheduler(runtime: Runtime, options: SchedulerOptions = {}): Scheduler {
  const tickMs = options.tickMs ?? 1_000;
  let running: Promise<void> | null = null;
  let stopped = false;
  let lastThrottleWarning = 0;

  const tick = async () => {
    if (running) return running; // never overlap ticks
    running = (async () => {
      const now = new Date();
      try {
        const stats = await dispatchDueProbes(runtime, now);
        recordSchedulerTick(stats);
        if (stats.claimed > 0) runtime.logger.debug(stats, 'probes dispatched');
        if (stats.throttled && Date.now() - lastThrottleWarning > 60_000) {
          lastThrottleWarning = Date.now();
          runtime.logger.warn(
            { backlog: stats.backlog, max: runtime.config.PROBE_MAX_BACKLOG },
            'probe backlog full: due servers wait (add workers)',
          );
        }
        for (const p of PERIODIC) {
          await runtime.queue.enqueue(p.name, [
            { id: jobIds.periodic(p.name, now, p.periodMs), payload: { reason: 'schedule' } },
          ]);
        }
      } catch (err) {
        runtime.logger.warn({ err }, 'scheduler tick failed; will retry next tick');
      } finally {
        running = null;
      }
    })();
    return running;
  };

  const timer = setInterval(() => void tick(), tickMs);
  void tick();
  // Daily compliance snapshot (default 00:05 UTC), and once at start-up in case the last run
  // was missed while no scheduler ran.
  const snapshot = () =>
    enqueueComplianceSnapshot(runtime).catch((err) =>
      runtime.logger.warn({ err }, 'could not enqueue the compliance snapshot'),
    );
  const cronTask = cron.schedule(runtime.config.COMPLIANCE_SNAPSHOT_CRON, snapshot, {
    timezone: 'UTC',
    name: 'compliance-snapshot',
  });
  void snapshot();

  return {
    tick,
    async close() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await cronTask.stop();
      await running;
    },
  };
}
