import cron from 'node-cron';
import { z } from 'zod';

/**
 * The whole configuration of every app, read from the environment once at start-up.
 * Unset DATABASE_URL → embedded Postgres (PGlite) under DATA_DIR; unset REDIS_URL → jobs run
 * in-process. A bad value stops the process before it listens (see loadConfig).
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], {
    error: 'must be one of true, false, 1, 0, yes, no',
  })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const optionalUrl = (protocols: string[]) =>
  z
    .url({ error: 'must be a URL' })
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), {
      error: `must use ${protocols.join(' or ')}`,
    })
    .optional();

const isoDate = z.iso.date({ error: 'must be a date as YYYY-MM-DD' });

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const envSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** Where the service is reachable from outside; defaults to http://localhost:PORT. */
  /** Worker and scheduler processes serve their own /metrics here when set (they have no API). */
  METRICS_PORT: int(0, 65535).optional(),
  PUBLIC_BASE_URL: optionalUrl(['http:', 'https:']),
  DATABASE_URL: optionalUrl(['postgres:', 'postgresql:']),
  /** Connections per process to a real Postgres (embedded mode always uses exactly one). */
  DATABASE_POOL_MAX: int(1, 200).default(10),
  REDIS_URL: optionalUrl(['redis:', 'rediss:']),
  /** Namespace of BullMQ keys in Redis; lets several deployments (or test runs) share one Redis. */
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/, { error: 'must be 1-64 of A-Z a-z 0-9 : _ -' })
    .default('observatory'),
  /**
   * How long a worker holds a job before another may take it over (BullMQ lockDuration; the
   * stalled check runs at half of it). A worker killed mid-job has its jobs run again after this.
   */
  JOB_LOCK_MS: int(1_000, 600_000).default(30_000),
  DATA_DIR: z.string().min(1).default('./.observatory'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PROBE_INTERVAL_S: int(5, 86_400).default(300),
  PROBE_TIMEOUT_MS: int(100, 120_000).default(10_000),
  PROBE_CONCURRENCY: int(1, 5_000).default(100),
  /**
   * The scheduler stops claiming due servers while this many probe jobs wait in the queue
   * (backpressure): past saturation the servers stay due and lag shows it, instead of the queue
   * growing without bound with a new job per server every interval.
   */
  PROBE_MAX_BACKLOG: int(10, 10_000_000).default(20_000),
  /** At most this many probes in flight against one host (per worker). */
  PROBE_PER_HOST_CONCURRENCY: int(1, 1_000).default(4),
  PROBE_ALLOW_PRIVATE_NETWORKS: booleanFlag.default(false),
  /** First day of recorded data; default: the day the data store was created (kept in the DB). */
  DATA_SINCE: isoDate.optional(),
  OPERATOR: z.string().min(1).max(200).default('MCP Trust Observatory (self-hosted)'),
  REGION: z.string().min(1).max(100).default('local'),
  /**
   * Whose X-Forwarded-For to believe when working out a client's address (per-address limits):
   * false (default: the socket peer), true (any peer: only behind a proxy you control), or a
   * comma-separated list of proxy addresses/CIDRs (e.g. "10.0.0.0/8,127.0.0.1").
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .refine((v) => !/^\d+$/.test(v), {
      error: 'a hop count cannot be checked; give true, false or the proxy addresses/CIDRs',
    })
    .transform((v): boolean | string => (v === 'true' ? true : v === 'false' ? false : v)),
  RETENTION_DAYS: int(1, 3650).default(90),
  /** Audit data (events, receipts) is kept at least this long (Article 12: ≥ 6 months). */
  AUDIT_RETENTION_DAYS: int(183, 36_500).default(400),
  /** A private Ed25519 JWK (JSON) to sign receipts with; unset → generated once and kept. */
  RECEIPT_SIGNING_JWK: z.string().min(1).optional(),
  /** cron expression (UTC) for the daily compliance snapshot. */
  COMPLIANCE_SNAPSHOT_CRON: z
    .string()
    .refine((v) => cron.validate(v), { error: 'must be a cron expression, e.g. "5 0 * * *"' })
    .default('5 0 * * *'),
});

export type Env = z.infer<typeof envSchema>;
