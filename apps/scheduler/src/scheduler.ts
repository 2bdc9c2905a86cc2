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

/**
 * The scheduler process: every tick, due servers become probe jobs. Any number of schedulers
 * may run; SKIP LOCKED claims and deterministic job ids make duplicates harmless.
 */
export function startScheduler(runtime: Runtime, options: SchedulerOptions = {}): Scheduler {
  const tickMs = options.tickMs ?? 1_000;
  let running: Promise<void> | null = null;
  let stopped = false;

  const tick = async () => {
    if (running) return running; // never overlap ticks
    running = (async () => {
      try {
        const stats = await dispatchDueProbes(runtime);
        if (stats.claimed > 0) runtime.logger.debug(stats, 'probes dispatched');
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
