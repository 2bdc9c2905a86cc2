/**
 * npm run bench:fleet [-- --servers 10000 --seconds 60 --interval 30 --phases 1,2]
 *
 * How far one machine carries the distributed observatory: N virtual MCP servers (testkit
 * fleet, its own process) probed at a short interval by separate `observatory` processes — one
 * api, one scheduler, and 1 then 2 workers — on a fresh database of the machine's Postgres
 * (127.0.0.1:5432, created and dropped with the db test helpers) and the machine's Redis under a
 * unique queue prefix.
 *
 * Each phase starts from a clean schedule (slots spread evenly over one interval, as a fleet
 * registered over time would be), warms up, then measures for --seconds:
 * - probes/s achieved (probes started in the window) against the demand (servers / interval);
 * - schedule lag: probe_results.started_at − scheduled_at, p50 / p99 / max;
 * - rows/s stored (recorded_at in the window);
 * - what is left behind at the end: servers overdue by more than 2 s and jobs still waiting;
 * - CPU of every process (fleet, api, scheduler, workers, Postgres backends, Redis) from
 *   /proc/<pid>/stat, and RSS of the observatory processes (VmRSS, sampled every 2 s);
 * - the scheduler's claim rate (its debug "probes dispatched" lines).
 * The api serves 20 trust reads/s meanwhile (loopback), so its RSS is that of a working api.
 *
 * Target on a 2-core machine: 300 probes/s sustained with lag p99 ≤ 2 s. The report projects
 * the machines needed for 100,000 servers every 5 minutes (333 probes/s). The one-worker phase
 * is the in-run baseline the others are compared with. Writes bench-results/fleet.json.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type CliProcess, runCli } from '@observatory/cli-app/test/cli-process.ts';
import { createTestDatabase, type TestDatabase } from '@observatory/db/testing';
import { deleteQueueKeys } from '@observatory/queue/testing';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { apiUrlOf, dispatchedLines, distributedEnv, stopCli } from './lib/distributed.ts';
import { type FleetProcess, registerFleet, startFleetProcess } from './lib/fleet-process.ts';
import { childPids, groupCpuSeconds, RssSampler } from './lib/process-stats.ts';

const { values } = parseArgs({
  options: {
    servers: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '15' },
    interval: { type: 'string', default: '30' },
    // worker counts, one phase each; "1@5" = one worker at a 5 s interval (saturation: the ceiling)
    phases: { type: 'string', default: '1,2,1@5' },
    concurrency: { type: 'string', default: '200' },
  },
});
const SERVERS = Number(values.servers);
const WINDOW_S = Number(values.seconds);
const WARMUP_S = Number(values.warmup);
const CONCURRENCY = values.concurrency;
const PHASES = values.phases.split(',').map((p) => {
  const [w, i] = p.split('@');
  return { workers: Number(w), intervalS: Number(i ?? values.interval) };
});
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TARGET_RATE = 300;
const TARGET_LAG_P99_S = 2;
const PROJECTED = { servers: 100_000, intervalS: 300 };

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => round(bytes / 2 ** 20, 0);

/** The machine's Postgres: its postmaster and every child (backends, writers, autovacuum). */
async function postgresPids(db: TestDatabase): Promise<() => number[]> {
  const [row] = await db.sql<{ setting: string }[]>`
    SELECT setting FROM pg_settings WHERE name = 'data_directory'`;
  const postmaster = Number(readFileSync(path.join(row!.setting, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return () => [postmaster, ...childPids(postmaster)];
}

async function redisPid(): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    const info = await redis.info('server');
    return Number(/process_id:(\d+)/.exec(info)?.[1]);
  } finally {
    redis.disconnect();
  }
}

/** Slots spread evenly over one interval from `start`: the steady state of a fleet. */
async function spreadSchedule(db: TestDatabase, start: Date, intervalS: number) {
  await db.sql`
    UPDATE servers s SET next_probe_at = ${start}::timestamptz
      + make_interval(secs => (o.rn - 1) * ${intervalS}::float8 / ${SERVERS})
    FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM servers) o
    WHERE s.id = o.id`;
}

/** Trust reads at a fixed rate on the api (loopback), so its RSS is that of a serving api. */
function readLoad(apiUrl: string, urls: string[], perSecond: number) {
  let n = 0;
  let errors = 0;
  const timer = setInterval(() => {
    const url = urls[(n++ * 7919) % urls.length]!;
    fetch(`${apiUrl}/api/trust?url=${encodeURIComponent(url)}`, { signal: AbortSignal.timeout(10_000) })
      .then((r) => {
        if (r.status !== 200) errors++;
        return r.arrayBuffer();
      })
      .catch(() => errors++);
  }, 1000 / perSecond);
  return {
    stop: () => clearInterval(timer),
    get sent() {
      return n;
    },
    get errors() {
      return errors;
    },
  };
}

/** Sum of `claimed` and max `maxLagSeconds` over the scheduler's debug lines in [from, to). */
function schedulerClaims(scheduler: CliProcess, from: number, to: number) {
  let claimed = 0;
  let maxDispatchLagS = 0;
  for (const entry of dispatchedLines(scheduler.output())) {
    if (entry.time < from || entry.time >= to) continue;
    claimed += entry.claimed;
    maxDispatchLagS = Math.max(maxDispatchLagS, entry.maxLagSeconds);
  }
  return { claimed, maxDispatchLagS };
}

interface PhaseResult {
  workers: number;
  interval_s: number;
  demand_per_s: number;
  achieved_per_s: number;
  rows_per_s: number;
  lag_p50_s: number;
  lag_p99_s: number;
  lag_max_s: number;
  probe_ms_p50: number;
  probe_ms_p99: number;
  overdue_at_end: number;
  queue_waiting_at_end: number;
  failed_jobs: number;
  scheduler_claims_per_s: number;
  scheduler_max_dispatch_lag_s: number;
  cpu_percent: Record<string, number>;
  /** CPU milliseconds per probe, per process group and for the observatory (all but the fleet). */
  cpu_ms_per_probe: Record<string, number>;
  load_average_1m: number;
  rss_mb: Record<string, { max: number; last: number }>;
  api_reads: { sent: number; errors: number };
  sustained: boolean;
}

async function runPhase(
  db: TestDatabase,
  fleet: FleetProcess,
  pg: () => number[],
  redis: number,
  workers: number,
  intervalS: number,
  prefixes: string[],
): Promise<PhaseResult> {
  const prefix = `bench-fleet-${randomBytes(4).toString('hex')}`;
  prefixes.push(prefix);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'obs-bench-fleet-'));
  const env = distributedEnv(
    { databaseUrl: db.url, redisUrl: REDIS_URL, queuePrefix: prefix, dataDir, probeIntervalS: intervalS },
    {
      PROBE_CONCURRENCY: CONCURRENCY,
      // every virtual server shares 127.0.0.1:<port>: the per-host cap must not be the bottleneck
      PROBE_PER_HOST_CONCURRENCY: CONCURRENCY,
    },
  );
  await spreadSchedule(db, new Date(Date.now() + 8_000), intervalS);

  const api = runCli(['api'], env);
  const scheduler = runCli(['scheduler'], { ...env, LOG_LEVEL: 'debug' });
  const workerProcs = Array.from({ length: workers }, () => runCli(['worker'], env));
  const all = [api, scheduler, ...workerProcs];
  try {
    const [apiUrl] = await Promise.all([
      apiUrlOf(api, 60_000),
      scheduler.waitFor(/scheduler running/, 60_000),
      ...workerProcs.map((w) => w.waitFor(/worker running/, 60_000)),
    ]);
    const reads = readLoad(apiUrl, fleet.urls, 20);
    process.stdout.write(`  ${workers} worker(s) @ ${intervalS} s: warming up ${WARMUP_S} s…\n`);
    await sleep(WARMUP_S * 1000);

    const groups: Record<string, () => number[]> = {
      fleet: () => [fleet.child.pid!],
      api: () => [api.child.pid!],
      scheduler: () => [scheduler.child.pid!],
      workers: () => workerProcs.map((w) => w.child.pid!),
      postgres: pg,
      redis: () => [redis],
    };
    const loadAverage = os.loadavg()[0]!;
    const cpuBefore = Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, groupCpuSeconds(f)]));
    const samplers = {
      api: new RssSampler(api.child.pid!, 2_000).start(),
      scheduler: new RssSampler(scheduler.child.pid!, 2_000).start(),
      ...Object.fromEntries(
        workerProcs.map((w, i) => [`worker${i + 1}`, new RssSampler(w.child.pid!, 2_000).start()]),
      ),
    };
    const t0 = new Date();
    process.stdout.write(`  measuring ${WINDOW_S} s…\n`);
    await sleep(WINDOW_S * 1000);
    const t1 = new Date();
    const cpuAfter = Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, groupCpuSeconds(f)]));
    for (const s of Object.values(samplers)) s.stop();
    reads.stop();

    const [stats] = await db.sql<
      {
        probes: number;
        p50: number | null;
        p99: number | null;
        max: number | null;
        ms50: number | null;
        ms99: number | null;
      }[]
    >`
      SELECT count(*)::int AS probes,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY total_ms) AS ms50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY total_ms) AS ms99,
             percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - scheduled_at)) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - scheduled_at)) AS p99,
             max(extract(epoch FROM started_at - scheduled_at))::float8 AS max
      FROM probe_results WHERE started_at >= ${t0} AND started_at < ${t1}`;
    const [rows] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM probe_results WHERE recorded_at >= ${t0} AND recorded_at < ${t1}`;
    const [overdue] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM servers WHERE next_probe_at < ${new Date(t1.getTime() - 2_000)}`;
    const queue = new Queue('probe', {
      connection: new Redis(REDIS_URL, { maxRetriesPerRequest: null }),
      prefix,
    });
    const counts = await queue.getJobCounts('waiting', 'prioritized', 'failed');
    await queue.close();
    const claims = schedulerClaims(scheduler, t0.getTime(), t1.getTime());

    const windowS = (t1.getTime() - t0.getTime()) / 1000;
    const achieved = stats!.probes / windowS;
    const demand = SERVERS / intervalS;
    const lagP99 = stats!.p99 ?? Number.POSITIVE_INFINITY;
    const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0);
    const cpuUsed = Object.fromEntries(Object.keys(groups).map((k) => [k, cpuAfter[k]! - cpuBefore[k]!]));
    const observatoryCpu = Object.entries(cpuUsed)
      .filter(([k]) => k !== 'fleet')
      .reduce((a, [, v]) => a + v, 0);
    const perProbe = (seconds: number) => round((seconds * 1000) / Math.max(1, stats!.probes), 3);
    return {
      workers,
      interval_s: intervalS,
      demand_per_s: round(demand),
      achieved_per_s: round(achieved),
      rows_per_s: round(rows!.n / windowS),
      lag_p50_s: round(stats!.p50 ?? 0, 3),
      lag_p99_s: round(lagP99, 3),
      lag_max_s: round(stats!.max ?? 0, 3),
      probe_ms_p50: round(stats!.ms50 ?? 0, 1),
      probe_ms_p99: round(stats!.ms99 ?? 0, 1),
      overdue_at_end: overdue!.n,
      queue_waiting_at_end: waiting,
      failed_jobs: counts.failed ?? 0,
      scheduler_claims_per_s: round(claims.claimed / windowS),
      scheduler_max_dispatch_lag_s: round(claims.maxDispatchLagS, 2),
      cpu_percent: Object.fromEntries(
        Object.keys(groups).map((k) => [k, round((cpuUsed[k]! / windowS) * 100, 0)]),
      ),
      cpu_ms_per_probe: {
        ...Object.fromEntries(Object.keys(groups).map((k) => [k, perProbe(cpuUsed[k]!)])),
        observatory: perProbe(observatoryCpu),
      },
      load_average_1m: round(loadAverage, 2),
      rss_mb: Object.fromEntries(
        Object.entries(samplers).map(([k, s]) => [k, { max: mb(s.maxBytes), last: mb(s.lastBytes) }]),
      ),
      api_reads: { sent: reads.sent, errors: reads.errors },
      // kept up: lag within target and no backlog building (less than 2 s of demand left over)
      sustained: lagP99 <= TARGET_LAG_P99_S && overdue!.n + waiting < demand * 2,
    };
  } finally {
    await Promise.all(all.map((p) => stopCli(p, 20_000)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function printTable(results: PhaseResult[]) {
  const rows = results.map((r) => ({
    workers: String(r.workers),
    'demand/s': String(r.demand_per_s),
    'probes/s': String(r.achieved_per_s),
    'rows/s': String(r.rows_per_s),
    'lag p50 s': String(r.lag_p50_s),
    'lag p99 s': String(r.lag_p99_s),
    'overdue+queued': String(r.overdue_at_end + r.queue_waiting_at_end),
    failed: String(r.failed_jobs),
    'CPU% fleet/api/sched/workers/pg/redis': [
      r.cpu_percent.fleet,
      r.cpu_percent.api,
      r.cpu_percent.scheduler,
      r.cpu_percent.workers,
      r.cpu_percent.postgres,
      r.cpu_percent.redis,
    ].join('/'),
    'CPU ms/probe': String(r.cpu_ms_per_probe.observatory),
    'RSS MB worker max': Object.entries(r.rss_mb)
      .filter(([k]) => k.startsWith('worker'))
      .map(([, v]) => v.max)
      .join('/'),
    'RSS MB api max': String(r.rss_mb.api?.max ?? 0),
    sustained: r.sustained ? 'yes' : 'NO',
  }));
  const headers = Object.keys(rows[0]!);
  const widths = headers.map((h) => Math.max(h.length, ...rows.map((r) => r[h as keyof typeof r].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  process.stdout.write(`\n${line(headers)}\n`);
  for (const r of rows) process.stdout.write(`${line(headers.map((h) => r[h as keyof typeof r]))}\n`);
}

const prefixes: string[] = [];
process.stdout.write(`bench:fleet — ${SERVERS} virtual servers, phases ${values.phases}\n`);
const fleet = await startFleetProcess([`healthy=${SERVERS}`]);
const db = await createTestDatabase({ poolMax: 2 });
const cleanup = async () => {
  fleet.child.kill('SIGTERM');
  await db.drop().catch(() => {});
  for (const p of prefixes) await deleteQueueKeys(REDIS_URL, p).catch(() => 0);
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
try {
  await registerFleet(db, fleet.urls, 'bench');
  const pg = await postgresPids(db);
  const redis = await redisPid();
  const results: PhaseResult[] = [];
  for (const phase of PHASES) {
    results.push(await runPhase(db, fleet, pg, redis, phase.workers, phase.intervalS, prefixes));
  }
  printTable(results);

  const baseline = results[0]!;
  const projectedRate = PROJECTED.servers / PROJECTED.intervalS;
  // Capacity of one machine like this one, two ways:
  // - measured: the best rate a phase sustained (a lower bound if it only met its demand) and the
  //   rate a saturated phase pushed through (the ceiling, with lag growing);
  // - from cost: the observatory's CPU per probe (api, scheduler, workers, Postgres, Redis; not
  //   the fleet, which real servers replace), at 70% of all cores.
  const sustained = results.filter((r) => r.sustained);
  const bestSustained = Math.max(0, ...sustained.map((r) => r.achieved_per_s));
  const ceiling = Math.max(...results.map((r) => r.achieved_per_s));
  const costMs = Math.min(...results.map((r) => r.cpu_ms_per_probe.observatory!));
  const cores = os.cpus().length;
  const byCost = round((cores * 1000 * 0.7) / costMs, 0);
  const summary = {
    machine: {
      cores,
      cpu: os.cpus()[0]?.model,
      memory_gb: round(os.totalmem() / 2 ** 30),
      note: 'shared machine: other processes may run; see load_average_1m per phase',
    },
    servers: SERVERS,
    window_s: WINDOW_S,
    probe_concurrency: Number(CONCURRENCY),
    target: { probes_per_s: TARGET_RATE, lag_p99_s: TARGET_LAG_P99_S },
    phases: results,
    ratios_vs_first_phase: results.map((r) => ({
      workers: r.workers,
      interval_s: r.interval_s,
      achieved: round(r.achieved_per_s / baseline.achieved_per_s, 2),
      lag_p99: round(r.lag_p99_s / Math.max(baseline.lag_p99_s, 0.001), 2),
      cpu_ms_per_probe: round(r.cpu_ms_per_probe.observatory! / baseline.cpu_ms_per_probe.observatory!, 2),
    })),
    target_met: results.some((r) => r.sustained && r.achieved_per_s >= TARGET_RATE),
    projection: {
      servers: PROJECTED.servers,
      interval_s: PROJECTED.intervalS,
      probes_per_s: round(projectedRate),
      best_sustained_probes_per_s: bestSustained,
      saturated_probes_per_s: ceiling,
      observatory_cpu_ms_per_probe: costMs,
      probes_per_s_at_70pct_cpu: byCost,
      machines_by_sustained_rate: bestSustained ? Math.ceil(projectedRate / bestSustained) : null,
      machines_by_cpu_cost: Math.ceil(projectedRate / byCost),
    },
  };
  process.stdout.write(
    `\ntarget ${TARGET_RATE} probes/s with lag p99 ≤ ${TARGET_LAG_P99_S} s: ${summary.target_met ? 'met' : 'NOT met'}\n` +
      `ceiling here (saturated): ${ceiling} probes/s; observatory CPU ${costMs} ms/probe → ${byCost} probes/s at 70% of ${cores} cores\n` +
      `100,000 servers every 5 min = ${round(projectedRate)} probes/s → ${summary.projection.machines_by_cpu_cost} machine(s) ` +
      `like this one by CPU cost (${summary.projection.machines_by_sustained_rate ?? '?'} by the best sustained rate, ${bestSustained}/s)\n`,
  );
  mkdirSync('bench-results', { recursive: true });
  writeFileSync('bench-results/fleet.json', `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write('wrote bench-results/fleet.json\n');
} finally {
  await cleanup();
}
// keep-alive sockets of the read load would hold the event loop open a while longer
process.exit(0);
