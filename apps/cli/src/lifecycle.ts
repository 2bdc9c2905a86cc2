import { type Config, loadConfigOrExit } from '@observatory/config';
import {
  type AppLogger,
  createLogger,
  openRuntime,
  type Runtime,
  startMetricsServer,
} from '@observatory/service';

/**
 * Runs a long-lived command: loads config (exiting on bad values before anything listens),
 * opens the runtime, starts the parts, and on SIGINT/SIGTERM stops them in reverse order and
 * closes the runtime, so the embedded data dir is always left consistent. A second signal
 * exits at once.
 */
export async function runService(
  name: string,
  start: (runtime: Runtime, config: Config, logger: AppLogger) => Promise<Array<() => Promise<void>>>,
  options: {
    /** A reason to refuse this configuration, or null. */
    check?: (config: Config) => string | null;
    /** The process answers HTTP requests: watch Postgres so it can refuse at once while away. */
    servesRequests?: boolean;
  } = {},
): Promise<void> {
  const config = loadConfigOrExit();
  const refusal = options.check?.(config);
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    process.exit(1);
  }
  const logger = createLogger(config.LOG_LEVEL, name);
  const runtime = await openRuntime(config, logger, { watchDatabase: options.servesRequests });
  let stops: Array<() => Promise<void>> = [];
  try {
    stops = await start(runtime, config, logger);
  } catch (err) {
    logger.error({ err }, `${name} failed to start`);
    await runtime.close();
    process.exit(1);
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Safety net: a step that never finishes must not keep the process up until it is killed
    // (once, a query postgres.js never settled after a Postgres crash kept the API's close
    // waiting; see patches/postgres+3.4.9.patch). Past the deadline the process exits with 1,
    // naming the step that hung; embedded data is then left to Postgres crash recovery.
    let step = 'stopping the service';
    const deadlineMs = shutdownDeadlineMs(config);
    setTimeout(() => {
      logger.error({ signal, step, deadlineMs }, 'shutdown did not finish in time: exiting anyway');
      process.exit(1);
    }, deadlineMs);
    for (const stop of stops.reverse()) {
      await stop().catch((err) => logger.error({ err }, 'error while stopping'));
    }
    step = 'closing the runtime (active jobs, buffered writes, database)';
    await runtime.close();
    process.stdout.write('stopped cleanly\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * How long a shutdown may take before the process exits anyway: the grace active jobs get
 * (PROBE_TIMEOUT_MS + 2 s, see Runtime.close) and 5 s for the rest (HTTP close, buffered
 * writes, the database), which normally takes well under a second. Deployments allow more
 * (infra/k8s: api 30 s, worker 45 s; the fault tests give 15 s with PROBE_TIMEOUT_MS 5 s).
 */
export function shutdownDeadlineMs(config: Pick<Config, 'PROBE_TIMEOUT_MS'>): number {
  return config.PROBE_TIMEOUT_MS + 2_000 + 5_000;
}

export function describeStorage(runtime: Runtime): string {
  const { config } = runtime;
  const jobs = runtime.queue.kind === 'bullmq' ? 'Redis (BullMQ)' : 'in-process';
  return runtime.db.mode === 'embedded'
    ? `mode: embedded — data in ${runtime.db.location}, jobs ${jobs}`
    : `mode: ${config.mode} — Postgres ${runtime.db.location}, jobs ${jobs}`;
}

/** Separate worker/scheduler processes only make sense on shared Postgres and Redis. */
export function requireDistributed(config: Config): string | null {
  if (!config.DATABASE_URL || !config.REDIS_URL) {
    return 'This command runs as its own process and needs DATABASE_URL and REDIS_URL (distributed mode).\nOn one machine, use `observatory start` instead.';
  }
  return null;
}

/** A worker or scheduler serves its own /metrics when METRICS_PORT is set; returns its stopper. */
export async function serveMetrics(runtime: Runtime): Promise<Array<() => Promise<void>>> {
  const port = runtime.config.METRICS_PORT;
  if (port === undefined) return [];
  const server = await startMetricsServer(port, runtime.config.HOST);
  process.stdout.write(`metrics on http://${runtime.config.HOST}:${server.port}/metrics\n`);
  return [() => server.close()];
}
