import { jobIds } from '@observatory/queue';
import type { Runtime } from '@observatory/service';
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
  { name: 'analyze', periodMs: 1_000 },
  { name: 'baselines', periodMs: 5 * 60_000 },
  { name: 'maintenance', periodMs: 60_000 },
] as const;

/**
 * The scheduler process: every tick, due servers become probe jobs, and the periodic jobs of
 * the period are enqueued. Any number of schedulers may run; SKIP LOCKED claims and
 * deterministic job ids make duplicates harmless.
 */
export function startScheduler(runtime: Runtime, options: SchedulerOptions = {}): Scheduler {
  const tickMs = options.tickMs ?? 1_000;
  let running: Promise<void> | null = null;
  let stopped = false;

  const tick = async () => {
    if (running) return running; // never overlap ticks
    running = (async () => {
      const now = new Date();
      try {
        const stats = await dispatchDueProbes(runtime, now);
        if (stats.claimed > 0) runtime.logger.debug(stats, 'probes dispatched');
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

  return {
    tick,
    async close() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
