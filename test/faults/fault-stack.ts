import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CliProcess, runCli } from '@observatory/cli-app/test/cli-process.ts';
import { createRepositories, type Database, migrate, openDatabase } from '@observatory/db';
import { generateApiKey } from '@observatory/service';
import { type Fleet, startFleet } from '@observatory/testkit';
import { Queue } from 'bullmq';
import { apiUrlOf, distributedEnv, stopCli } from '../../scripts/lib/distributed.ts';
import { LoadGenerator, type LoadOptions } from '../../scripts/lib/load-generator.ts';
import {
  startThrowawayPostgres,
  startThrowawayRedis,
  type ThrowawayPostgres,
  type ThrowawayRedis,
} from '../../scripts/lib/throwaway-services.ts';

/**
 * The observatory in distributed mode on a throwaway Postgres and Redis (their own ports and
 * directories, so a test may stop, crash and restart them), with a testkit fleet on loopback
 * as probe targets. The api, workers and schedulers are separate `observatory` processes
 * (runCli); the test process keeps a connection of its own to count what was stored.
 */

export const PROBE_INTERVAL_S = 5;
export const JOB_LOCK_MS = 2_000;

export type Role = 'api' | 'worker' | 'scheduler';

export interface ObservatoryProcess extends CliProcess {
  role: Role;
  /** True while the process runs. */
  alive(): boolean;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface FaultStack {
  pg: ThrowawayPostgres;
  redis: ThrowawayRedis;
  fleet: Fleet;
  /** The test's own pool on the observatory database (for counting). */
  db: Database;
  /** Environment shared by every observatory process. */
  env: Record<string, string>;
  servers: Array<{ id: number; url: string }>;
  /** Starts `observatory <role>` and waits until it says it runs. */
  spawn(role: Role, env?: Record<string, string>): Promise<ObservatoryProcess>;
  /** Starts `observatory api` on an OS-chosen loopback port; resolves with its base URL. */
  spawnApi(env?: Record<string, string>): Promise<{ proc: ObservatoryProcess; url: string }>;
  /** A BullMQ view of one queue (counts, job ids); only while Redis is up. */
  queue(name: 'probe'): Queue;
  /** An agent API key with a large allowance, straight in the database. */
  createApiKey(checks: number): Promise<string>;
  /**
   * An api, a worker and a scheduler; once every server has been probed, paced load on the
   * api (20 reports/s, 10 trust reads/s, 5 agent queries/s unless `load` says otherwise).
   */
  startUnderLoad(load?: Partial<LoadOptions>): Promise<{
    api: ObservatoryProcess;
    worker: ObservatoryProcess;
    scheduler: ObservatoryProcess;
    url: string;
    load: LoadGenerator;
  }>;
  close(): Promise<void>;
}

export interface FaultStackOptions {
  /** Fleet servers to register and probe (default 20 healthy). */
  servers?: number;
  /** Behaviour of the fleet servers (default 'healthy'). */
  behaviour?: Parameters<Fleet['add']>[0];
  redisAppendOnly?: boolean;
  env?: Record<string, string>;
}

export async function startFaultStack(opts: FaultStackOptions = {}): Promise<FaultStack> {
  const [pg, redis, fleet] = await Promise.all([
    startThrowawayPostgres(),
    startThrowawayRedis({ appendonly: opts.redisAppendOnly ?? false }),
    startFleet(),
  ]);
  const databaseUrl = await pg.createDatabase('observatory');
  const db = await openDatabase({ databaseUrl, poolMax: 2 });
  await migrate(db.sql);

  const servers: Array<{ id: number; url: string }> = [];
  for (let i = 0; i < (opts.servers ?? 20); i++) {
    const url = fleet.add(opts.behaviour ?? 'healthy').url;
    const [row] = await db.sql<{ id: number }[]>`
      INSERT INTO servers (url, slug, name, category, source)
      VALUES (${url}, ${`fleet-${i}`}, ${`fleet ${i}`}, 'other', 'registered') RETURNING id`;
    servers.push({ id: row!.id, url });
  }

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'obs-faults-'));
  const prefix = `obs-fault-${randomBytes(4).toString('hex')}`;
  const env = distributedEnv(
    { databaseUrl, redisUrl: redis.url, queuePrefix: prefix, dataDir, probeIntervalS: PROBE_INTERVAL_S },
    {
      DATABASE_POOL_MAX: '5',
      JOB_LOCK_MS: String(JOB_LOCK_MS),
      PROBE_TIMEOUT_MS: '5000',
      ...opts.env,
    },
  );

  const processes: ObservatoryProcess[] = [];
  // a test run that dies must not leave observatory processes behind
  const killAll = () => {
    for (const p of processes) if (p.alive()) p.child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const queues = new Map<string, Queue>();

  const spawn = async (role: Role, extra: Record<string, string> = {}) => {
    const cli = runCli([role], { ...env, ...extra });
    const proc: ObservatoryProcess = {
      ...cli,
      role,
      alive: () => cli.child.exitCode === null && cli.child.signalCode === null,
      stop: (graceMs = 20_000) => stopCli(cli, graceMs),
    };
    processes.push(proc);
    await cli.waitFor(role === 'api' ? /listening on/ : new RegExp(`${role} running`), 30_000);
    return proc;
  };

  const spawnApi = async (extra: Record<string, string> = {}) => {
    const proc = await spawn('api', extra);
    return { proc, url: await apiUrlOf(proc) };
  };
  const repos = createRepositories(db.sql);
  const createApiKey = async (checks: number) => {
    const key = generateApiKey();
    await repos.apiKeys.insert({
      prefix: key.displayPrefix,
      secretSha256: key.sha256,
      scopes: ['trust:read'],
      trialLimit: checks,
      createdIpHash: null,
    });
    return key.key;
  };

  return {
    pg,
    redis,
    fleet,
    db,
    env,
    servers,
    spawn,
    spawnApi,
    queue(name) {
      let q = queues.get(name);
      if (!q) {
        q = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port }, prefix });
        q.on('error', () => {});
        queues.set(name, q);
      }
      return q;
    },
    createApiKey,
    async startUnderLoad(options = {}) {
      const [{ proc: api, url }, worker, scheduler] = await Promise.all([
        spawnApi(),
        spawn('worker'),
        spawn('scheduler'),
      ]);
      await until(
        async () => (await serversProbedSince(db, new Date(0))).size === servers.length,
        20_000,
        'every server to be probed once',
      );
      const load = new LoadGenerator({
        apiUrl: url,
        serverUrls: servers.map((s) => s.url),
        apiKey: await createApiKey(10_000),
        rates: { report: 20, read: 10, query: 5 },
        ...options,
      }).start();
      return { api, worker, scheduler, url, load };
    },
    async close() {
      await Promise.all(processes.map((p) => p.stop(5_000)));
      process.off('exit', killAll);
      await Promise.all([...queues.values()].map((q) => q.close().catch(() => {})));
      await db.close().catch(() => {});
      await fleet.close();
      await Promise.all([pg.destroy(), redis.destroy()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` every 100 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // a check that throws (a dependency away, a refused connection) has simply not held yet
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Servers (ids) with at least one probe row recorded after `since`. */
export async function serversProbedSince(db: Database, since: Date): Promise<Set<number>> {
  const rows = await db.sql<{ server_id: number }[]>`
    SELECT DISTINCT server_id FROM probe_results WHERE recorded_at > ${since}`;
  return new Set(rows.map((r) => r.server_id));
}

/** (server_id, scheduled_at) pairs stored more than once, and probe ids stored more than once. */
export async function duplicateProbes(db: Database): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    SELECT (SELECT count(*) FROM (SELECT 1 FROM probe_results GROUP BY server_id, scheduled_at
                                  HAVING count(*) > 1) d)
         + (SELECT count(*) FROM (SELECT 1 FROM probe_results GROUP BY probe_id HAVING count(*) > 1) e)
           ::int AS n`;
  return row?.n ?? 0;
}
