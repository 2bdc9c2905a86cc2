import { JOB_NAMES, type JobName, jobCatalog, parsePayload } from './job-catalog.ts';
import type { JobHandler, JobHandlers, JobQueue, NewJob, QueueCounts } from './job-queue.ts';
import { type Logger, silentLogger } from './logger.ts';

interface PendingJob {
  id: string;
  payload: unknown;
  attempt: number;
}

/** How many finished job ids are remembered for dedupe (BullMQ keeps completed jobs likewise). */
const REMEMBERED_IDS = 20_000;

class Lane {
  readonly waiting: PendingJob[] = [];
  readonly delayed = new Map<string, NodeJS.Timeout>();
  /** Ids waiting, delayed, active, or recently finished: adding one of these is a no-op. */
  readonly known = new Set<string>();
  readonly finished: string[] = [];
  active = 0;
  failed = 0;
  completed = 0;
  concurrency = 0;
  handler: JobHandler<JobName> | undefined;
  readonly idle: Array<() => void> = [];

  constructor(readonly name: JobName) {}

  remember(id: string) {
    this.finished.push(id);
    if (this.finished.length > REMEMBERED_IDS) {
      const old = this.finished.splice(0, this.finished.length - REMEMBERED_IDS);
      for (const o of old) this.known.delete(o);
    }
  }
}

/**
 * Runs jobs inside this process (embedded mode: no Redis). Same contract as the BullMQ queue:
 * deterministic ids dedupe, failed handlers retry with exponential backoff up to the catalog's
 * attempts, at most `concurrency` jobs of a queue run at once. Jobs live in memory: what is
 * waiting when the process stops is not kept, which is fine because every producer here
 * (scheduler ticks, analysis passes) re-derives its work from Postgres.
 */
export class InProcessQueue implements JobQueue {
  readonly kind = 'in-process' as const;
  private readonly lanes = new Map<JobName, Lane>(JOB_NAMES.map((n) => [n, new Lane(n)]));
  private closing = false;
  private sequence = 0;

  constructor(private readonly logger: Logger = silentLogger) {}

  async enqueue<N extends JobName>(name: N, jobs: NewJob<N>[]): Promise<void> {
    if (this.closing) throw new Error('queue is closing');
    const lane = this.lane(name);
    for (const job of jobs) {
      const payload = parsePayload(name, job.payload);
      const id = job.id ?? `${name}-auto-${++this.sequence}`;
      if (lane.known.has(id)) continue;
      lane.known.add(id);
      const pending = { id, payload, attempt: 1 };
      if (job.delayMs && job.delayMs > 0) this.delay(lane, pending, job.delayMs);
      else lane.waiting.push(pending);
    }
    this.pump(lane);
  }

  async consume(handlers: JobHandlers, concurrency: Partial<Record<JobName, number>>): Promise<void> {
    for (const name of JOB_NAMES) {
      const handler = handlers[name];
      if (!handler) continue;
      const lane = this.lane(name);
      lane.handler = handler as JobHandler<JobName>;
      lane.concurrency = Math.max(1, concurrency[name] ?? 1);
      this.pump(lane);
    }
  }

  async counts(): Promise<Record<JobName, QueueCounts>> {
    const out = {} as Record<JobName, QueueCounts>;
    for (const [name, lane] of this.lanes) {
      out[name] = {
        waiting: lane.waiting.length,
        active: lane.active,
        delayed: lane.delayed.size,
        failed: lane.failed,
        completed: lane.completed,
      };
    }
    return out;
  }

  async backlog(name: JobName): Promise<number> {
    return this.lanes.get(name)?.waiting.length ?? 0;
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(graceMs = 10_000): Promise<void> {
    this.closing = true;
    const waits: Promise<void>[] = [];
    for (const lane of this.lanes.values()) {
      for (const timer of lane.delayed.values()) clearTimeout(timer);
      lane.delayed.clear();
      lane.waiting.length = 0;
      if (lane.active > 0) waits.push(new Promise((resolve) => lane.idle.push(resolve)));
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(waits),
      new Promise((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private lane(name: JobName): Lane {
    const lane = this.lanes.get(name);
    if (!lane) throw new Error(`unknown queue ${name}`);
    return lane;
  }

  private delay(lane: Lane, job: PendingJob, ms: number) {
    const timer = setTimeout(() => {
      lane.delayed.delete(job.id);
      if (this.closing) return;
      lane.waiting.push(job);
      this.pump(lane);
    }, ms);
    timer.unref();
    lane.delayed.set(job.id, timer);
  }

  private pump(lane: Lane) {
    while (!this.closing && lane.handler && lane.active < lane.concurrency && lane.waiting.length > 0) {
      const job = lane.waiting.shift()!;
      lane.active += 1;
      void this.run(lane, lane.handler, job);
    }
  }

  private async run(lane: Lane, handler: JobHandler<JobName>, job: PendingJob) {
    try {
      await handler(job.payload as never, { jobId: job.id, attempt: job.attempt });
      lane.completed += 1;
      lane.remember(job.id);
    } catch (err) {
      const spec = jobCatalog[lane.name];
      if (job.attempt < spec.attempts && !this.closing) {
        const wait = spec.backoffMs * 2 ** (job.attempt - 1);
        this.logger.warn(
          { err, job: job.id, attempt: job.attempt, retryInMs: wait },
          'job failed; will retry',
        );
        this.delay(lane, { ...job, attempt: job.attempt + 1 }, wait);
      } else {
        lane.failed += 1;
        lane.remember(job.id);
        this.logger.error({ err, job: job.id, attempt: job.attempt }, 'job failed for good');
      }
    } finally {
      lane.active -= 1;
      if (lane.active === 0) for (const resolve of lane.idle.splice(0)) resolve();
      this.pump(lane);
    }
  }
}
