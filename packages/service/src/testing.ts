import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Config, loadConfig } from '@observatory/config';
import { createEmbeddedTestDatabase, createTestDatabase } from '@observatory/db/testing';
import { deleteQueueKeys } from '@observatory/queue/testing';
import { createLogger } from './logger.ts';
import { openRuntimeOn, type Runtime } from './runtime.ts';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestRuntimeOptions {
  /** 'postgres' (default): a fresh database on the real Postgres; 'embedded': in-memory PGlite. */
  database?: 'postgres' | 'embedded';
  /** Use BullMQ on the real Redis (unique prefix) instead of the in-process queue. */
  redis?: boolean | string;
  env?: Record<string, string>;
}

export interface TestRuntime extends Runtime {
  /** The environment a child process needs to join this runtime's database and queue. */
  childEnv: Record<string, string>;
}

/** A runtime on its own database and queue prefix; close() also drops both. */
export async function createTestRuntime(opts: TestRuntimeOptions = {}): Promise<TestRuntime> {
  const prefix = `obs-test-${randomBytes(6).toString('hex')}`;
  const redisUrl = opts.redis === true ? TEST_REDIS_URL : opts.redis || undefined;
  const testDb =
    opts.database === 'embedded' ? await createEmbeddedTestDatabase() : await createTestDatabase();
  // embedded mode keeps its signing key file in DATA_DIR: never the repository's own
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'obs-test-data-'));
  const childEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    PROBE_ALLOW_PRIVATE_NETWORKS: 'true',
    ...('url' in testDb ? { DATABASE_URL: testDb.url as string } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...opts.env,
  };
  const config: Config = loadConfig({ ...childEnv, PORT: '0', HOST: '127.0.0.1' });
  const runtime = await openRuntimeOn(testDb, config, createLogger(config.LOG_LEVEL));
  return {
    ...runtime,
    childEnv,
    async close() {
      await runtime.close();
      if ('drop' in testDb) await (testDb as { drop(): Promise<void> }).drop();
      if (redisUrl) await deleteQueueKeys(redisUrl, prefix).catch(() => 0);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
