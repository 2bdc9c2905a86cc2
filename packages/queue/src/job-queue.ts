import type { JobName, JobPayload } from './job-catalog.ts';

export interface JobContext {
  jobId: string;
  /** 1 on the first run, 2 on the first retry … */
  attempt: number;
}

export type JobHandler<N extends JobName> = (payload: JobPayload<N>, ctx: JobContext) => Promise<void>;
export type JobHandlers = { [N in JobName]?: JobHandler<N> };

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

export interface NewJob<N extends JobName> {
  /** Deterministic id: a job whose id is already known is not added again. */
  id?: string;
  payload: JobPayload<N>;
  delayMs?: number;
}

/**
 * The one interface the apps use for background jobs. Two implementations: BullMQ on Redis
 * (distributed mode) and an in-process dispatcher (embedded mode) with the same semantics:
 * deterministic ids dedupe, handlers that throw are retried with backoff, concurrency is bounded.
 */
export interface JobQueue {
  readonly kind: 'bullmq' | 'in-process';
  /** Adds jobs; returns when they are accepted (Redis: stored). */
  enqueue<N extends JobName>(name: N, jobs: NewJob<N>[]): Promise<void>;
  /** Starts consuming the named queues with these handlers. */
  consume(handlers: JobHandlers, concurrency: Partial<Record<JobName, number>>): Promise<void>;
  counts(): Promise<Record<JobName, QueueCounts>>;
  /** Jobs of one queue waiting for a worker (not active, not delayed): one cheap call. */
  backlog(name: JobName): Promise<number>;
  /** Is the backing store reachable? (always true in-process) */
  ping(): Promise<boolean>;
  /** Stops taking new jobs, lets active ones finish (up to graceMs), closes connections. */
  close(graceMs?: number): Promise<void>;
}
