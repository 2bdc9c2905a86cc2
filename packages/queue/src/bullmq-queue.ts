import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { JOB_NAMES, type JobName, jobCatalog, parsePayload } from './job-catalog.ts';
import type { JobHandler, JobHandlers, JobQueue, NewJob, QueueCounts } from './job-queue.ts';
import { type Logger, silentLogger } from './logger.ts';

export interface BullmqQueueOptions {
  redisUrl: string;
  /** Namespace of every key; tests use a unique one each. */
  prefix: string;
  logger?: Logger;
  /** BullMQ lockDuration: a dead worker's jobs run again after this (default 30 s). */
  lockMs?: number;
}

/**
 * BullMQ on Redis, set up as BullMQ's production guide says: producers fail fast (no offline
 * queue, so an HTTP request never hangs on a missing Redis), workers retry Redis forever
 * (maxRetriesPerRequest null), finished jobs are trimmed by count and age, every connection
 * has an error listener, and close() lets active jobs finish.
 */
export class BullmqQueue implements JobQueue {
  readonly kind = 'bullmq' as const;
  private readonly producerConnection: Redis;
  private readonly queues = new Map<JobName, Queue>();
  private readonly workers: Worker[] = [];
  private readonly workerConnections: Redis[] = [];
  private readonly logger: Logger;

  constructor(private readonly options: BullmqQueueOptions) {
    this.logger = options.logger ?? silentLogger;
    this.producerConnection = new Redis(options.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 5_000,
      // keep reconnecting in the background, at most every 2 s
      retryStrategy: (times) => Math.min(times * 200, 2_000),
    });
    this.producerConnection.on('error', (err) =>
      this.logger.warn({ err: err.message }, 'redis (producer) error'),
    );
  }

  async enqueue<N extends JobName>(name: N, jobs: NewJob<N>[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.producerReady();
    const spec = jobCatalog[name];
    await this.queue(name).addBulk(
      jobs.map((job) => ({
        name,
        data: parsePayload(name, job.payload),
        opts: {
          ...(job.id ? { jobId: job.id } : {}),
          ...(job.delayMs ? { delay: job.delayMs } : {}),
          attempts: spec.attempts,
          backoff: { type: 'exponential', delay: spec.backoffMs },
          removeOnComplete: { count: 10_000, age: 3_600 },
          removeOnFail: { count: 50_000, age: 7 * 24 * 3_600 },
        },
      })),
    );
  }

  async consume(handlers: JobHandlers, concurrency: Partial<Record<JobName, number>>): Promise<void> {
    for (const name of JOB_NAMES) {
      const handler = handlers[name] as JobHandler<JobName> | undefined;
      if (!handler) continue;
      const connection = new Redis(this.options.redisUrl, {
        maxRetriesPerRequest: null,
        retryStrategy: (times) => Math.min(times * 200, 2_000),
      });
      connection.on('error', (err) =>
        this.logger.warn({ err: err.message, queue: name }, 'redis (worker) error'),
      );
      this.workerConnections.push(connection);
      const worker = new Worker(
        name,
        async (job: Job) =>
          handler(parsePayload(name, job.data) as never, {
            jobId: job.id ?? '',
            attempt: job.attemptsMade + 1,
          }),
        {
          connection,
          prefix: this.options.prefix,
          concurrency: Math.max(1, concurrency[name] ?? 1),
          // A worker that dies mid-job stops renewing its locks; once a lock expires the
          // stalled check (every half lock) moves the job back to wait and it runs again.
          lockDuration: this.options.lockMs ?? 30_000,
          stalledInterval: Math.max(500, Math.floor((this.options.lockMs ?? 30_000) / 2)),
          maxStalledCount: 2,
        },
      );
      worker.on('error', (err) => this.logger.warn({ err: err.message, queue: name }, 'worker error'));
      worker.on('failed', (job, err) =>
        this.logger.warn(
          { queue: name, job: job?.id, attempt: job?.attemptsMade, err: err.message },
          'job failed',
        ),
      );
      this.workers.push(worker);
    }
  }

  /**
   * Without an offline queue a command sent before the connection is up fails at once; wait a
   * short while for it (start-up, reconnect), then fail fast.
   */
  private async producerReady(timeoutMs = 2_000): Promise<void> {
    const conn = this.producerConnection;
    if (conn.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        conn.off('ready', onReady);
        reject(new Error(`Redis is not reachable (connection ${conn.status})`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      conn.once('ready', onReady);
    });
  }

  async counts(): Promise<Record<JobName, QueueCounts>> {
    await this.producerReady();
    const out = {} as Record<JobName, QueueCounts>;
    for (const name of JOB_NAMES) {
      const c = await this.queue(name).getJobCounts(
        'waiting',
        'active',
        'delayed',
        'failed',
        'completed',
        'prioritized',
      );
      out[name] = {
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
        active: c.active ?? 0,
        delayed: c.delayed ?? 0,
        failed: c.failed ?? 0,
        completed: c.completed ?? 0,
      };
    }
    return out;
  }

  async backlog(name: JobName): Promise<number> {
    await this.producerReady();
    return this.queue(name).getJobCountByTypes('waiting', 'prioritized');
  }

  async ping(timeoutMs = 1_000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await this.producerReady(timeoutMs);
      return await Promise.race([
        this.producerConnection.ping().then((r) => r === 'PONG'),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(graceMs = 10_000): Promise<void> {
    // The orderly way: workers let their active jobs finish, then everything closes. It needs
    // Redis, and its commands never fail while Redis is away (worker connections retry
    // forever), so it is only given the grace period.
    const orderly = (async () => {
      await Promise.all(this.workers.map((w) => w.close()));
      await Promise.all([...this.queues.values()].map((q) => q.close()));
    })();
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      orderly.then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    if (!inTime) {
      // Past the grace period: force the workers without waiting for Redis to confirm (their
      // jobs are picked up again by another worker once their lock expires) and drop every
      // connection, which fails whatever still waits on one.
      for (const w of this.workers) void w.close(true).catch(() => {});
      for (const q of this.queues.values()) void q.disconnect().catch(() => {});
      for (const w of this.workers) void w.disconnect().catch(() => {});
    }
    for (const c of [...this.workerConnections, this.producerConnection]) c.disconnect();
  }

  private queue(name: JobName): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new Queue(name, {
        connection: this.producerConnection,
        prefix: this.options.prefix,
        skipWaitingForReady: true,
      });
      q.on('error', (err) => this.logger.warn({ err: err.message, queue: name }, 'queue error'));
      this.queues.set(name, q);
    }
    return q;
  }
}
