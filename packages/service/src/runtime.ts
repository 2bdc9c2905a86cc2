import type { Config } from '@observatory/config';
import {
  createRepositories,
  type Database,
  migrate,
  openDatabase,
  type Repositories,
  readDataSince,
  readMeta,
} from '@observatory/db';
import { createJobQueue, type JobQueue } from '@observatory/queue';
import { Redis } from 'ioredis';
import type { AppLogger } from './logger.ts';

/**
 * Everything a process of the observatory holds open: the database, the repositories over it,
 * and the job queue. Each app (api, worker, scheduler) takes one; `observatory start` shares
 * one between all three.
 */
export interface Runtime {
  config: Config;
  logger: AppLogger;
  db: Database;
  repos: Repositories;
  queue: JobQueue;
  /** Shared Redis for rate limits across API replicas (distributed mode); null in-process. */
  redis: Redis | null;
  /** data_since: DATA_SINCE if set, else the day this data store was created. */
  dataSince: string;
  /** Secret mixed into hashes of client addresses, kept in the database. */
  addressPepper: string;
  /** Runs `fn` on close, after the queue has stopped and before the database closes. */
  beforeDatabaseClose(fn: () => Promise<void>): void;
  close(): Promise<void>;
}

export interface OpenRuntimeOptions {
  /**
   * Watch Postgres on a connection of its own so `db.available()` can say it is away (the API's
   * database gate uses it). Only processes that answer requests need it.
   */
  watchDatabase?: boolean;
}

export async function openRuntime(
  config: Config,
  logger: AppLogger,
  options: OpenRuntimeOptions = {},
): Promise<Runtime> {
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.dataDir,
    poolMax: config.DATABASE_POOL_MAX,
    watchAvailability: options.watchDatabase ?? false,
    onAvailabilityChange: (available) =>
      available
        ? logger.info('database answers again')
        : logger.warn('database unavailable: refusing new work until it answers'),
  });
  return openRuntimeOn(db, config, logger);
}

/** Builds the runtime on an already open database (tests bring their own). */
export async function openRuntimeOn(db: Database, config: Config, logger: AppLogger): Promise<Runtime> {
  try {
    const report = await migrate(db.sql);
    if (report.applied.length > 0) logger.info({ applied: report.applied }, 'database migrated');
    const queue = createJobQueue({
      redisUrl: config.REDIS_URL,
      prefix: config.QUEUE_PREFIX,
      logger,
      lockMs: config.JOB_LOCK_MS,
    });
    const redis = config.REDIS_URL
      ? new Redis(config.REDIS_URL, {
          // fail fast: a rate-limit lookup must never hang a request while Redis is away
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          connectTimeout: 2_000,
          retryStrategy: (times) => Math.min(times * 200, 2_000),
        })
      : null;
    redis?.on('error', (err) => logger.debug({ err: err.message }, 'redis (rate limit) error'));
    const dataSince = config.DATA_SINCE ?? (await readDataSince(db.sql));
    const addressPepper = (await readMeta(db.sql, 'address_pepper')) ?? 'unset';
    let closed = false;
    const hooks: Array<() => Promise<void>> = [];
    return {
      config,
      logger,
      db,
      repos: createRepositories(db.sql),
      queue,
      redis,
      dataSince,
      addressPepper,
      beforeDatabaseClose: (fn) => void hooks.push(fn),
      async close() {
        if (closed) return;
        closed = true;
        // Active jobs may finish within the grace period (a probe never outlives its timeout).
        await queue.close(config.PROBE_TIMEOUT_MS + 2_000);
        for (const hook of hooks) {
          await hook().catch((err) => logger.error({ err }, 'shutdown hook failed'));
        }
        redis?.disconnect();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
