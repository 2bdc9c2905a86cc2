export * from './bullmq-queue.ts';
export * from './in-process-queue.ts';
export * from './job-catalog.ts';
export * from './job-queue.ts';
export * from './logger.ts';

import { BullmqQueue } from './bullmq-queue.ts';
import { InProcessQueue } from './in-process-queue.ts';
import type { JobQueue } from './job-queue.ts';
import type { Logger } from './logger.ts';

/** REDIS_URL set → BullMQ; unset → the in-process dispatcher. */
export function createJobQueue(opts: {
  redisUrl?: string | undefined;
  prefix: string;
  logger?: Logger;
  lockMs?: number;
}): JobQueue {
  return opts.redisUrl
    ? new BullmqQueue({
        redisUrl: opts.redisUrl,
        prefix: opts.prefix,
        ...(opts.logger ? { logger: opts.logger } : {}),
        ...(opts.lockMs ? { lockMs: opts.lockMs } : {}),
      })
    : new InProcessQueue(opts.logger);
}
