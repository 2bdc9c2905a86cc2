/**
 * npm run soak [-- --minutes 30 --servers 300 --interval 10]
 *
 * A long run of the distributed observatory under mixed, bounded load — not part of CI.
 * Separate api, scheduler and worker processes on a fresh database of the machine's Postgres
 * (dropped at the end) and the machine's Redis (unique queue prefix, keys removed at the end);
 * a testkit fleet in its own process as probe targets (mostly healthy, some slow, flaky, dead
 * and auth-walled servers); on the api, loopback only: 20 reports/s, 20 trust reads/s and
 * 5 agent queries/s (each with a signed receipt).
 *
 * Every 30 s it samples the RSS of each process (/proc/<pid>/status VmRSS). At the end it stops
 * the load and the scheduler, lets the queue drain, and checks the counts:
 * - reports sent = acknowledged (202) = stored (a report is stored as its audit event);
 * - receipts handed out = receipt rows;
 * - probe slots dispatched (the scheduler's debug log) = probe rows + failed jobs, none stored
 *   twice, none failed;
 * - no answer other than success.
 * It prints the RSS table with the growth from the first to the last third of the run (after a
 * 2-minute warm-up), writes bench-results/soak.json, and exits 1 if a count differs.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runCli } from '@observatory/cli-app/test/cli-process.ts';
import { createRepositories } from '@observatory/db';
import { createTestDatabase } from '@observatory/db/testing';
import { deleteQueueKeys } from '@observatory/queue/testing';
import { generateApiKey } from '@observatory/service';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { apiUrlOf, distributedEnv } from './lib/distributed.ts';
import { registerFleet, startFleetProcess } from './lib/fleet-process.ts';
import { LoadGenerator, tally } from './lib/load-generator.ts';
import { RssSampler } from './lib/process-stats.ts';
import { badAnswers, reconcile } from './lib/reconcile.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    servers: { type: 'string', default: '300' },
    interval: { type: 'string', default: '10' },
    'sample-s': { type: 'string', default: '30' },
  },
});
const MINUTES = Number(values.minutes);
const SERVERS = Number(values.servers);
const SAMPLE_MS = Number(values['sample-s']) * 1000;
const WARMUP_MS = Math.min(120_000, (MINUTES * 60_000) / 5);
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const AGENT = 'soak';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The fleet's mix: counts per behaviour, scaled to SERVERS. */
function fleetPlan(total: number): string[] {
  const share = { slow: 0.06, flaky: 0.06, dead: 0.04, auth: 0.04 };
  const counts = Object.fromEntries(Object.entries(share).map(([k, f]) => [k, Math.round(total * f)]));
  const healthy = total - Object.values(counts).reduce((a, b) => a + b, 0);
  return [`healthy=${healthy}`, ...Object.entries(counts).map(([k, n]) => `${k}=${n}`), '--slow-ms', '800'];
}

process.stdout.write(`soak: ${MINUTES} min, ${SERVERS} servers every ${values.interval} s, mixed load\n`);
const fleet = await startFleetProcess(fleetPlan(SERVERS));
const db = await createTestDatabase({ poolMax: 2 });
const prefix = `soak-${randomBytes(4).toString('hex')}`;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'obs-soak-'));
const env = distributedEnv({
  databaseUrl: db.url,
  redisUrl: REDIS_URL,
  queuePrefix: prefix,
  dataDir,
  probeIntervalS: Number(values.interval),
});
const procs = {
  api: runCli(['api'], env),
  // its debug lines carry each tick's claim count: what was dispatched
  scheduler: runCli(['scheduler'], { ...env, LOG_LEVEL: 'debug' }),
  worker: runCli(['worker'], env),
};

/** Sums a process's pino lines: `claimed` of "probes dispatched", and warnings/errors by code or message. */
function readLog(output: string) {
  let claimed = 0;
  const errors: Record<string, number> = {};
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as {
      level: number;
      msg: string;
      claimed?: number;
      err?: string | { code?: string; message?: string };
    };
    if (entry.msg === 'probes dispatched') claimed += entry.claimed ?? 0;
    if (entry.level >= 40) {
      const err = typeof entry.err === 'string' ? entry.err : (entry.err?.code ?? entry.err?.message ?? '');
      const key = `${entry.msg}: ${err}`.slice(0, 100);
      errors[key] = (errors[key] ?? 0) + 1;
    }
  }
  return { claimed, errors };
}
let failed = false;
try {
  await registerFleet(db, fleet.urls, 'soak');
  const key = generateApiKey();
  await createRepositories(db.sql).apiKeys.insert({
    prefix: key.displayPrefix,
    secretSha256: key.sha256,
    scopes: ['trust:read'],
    trialLimit: 10_000_000,
    createdIpHash: null,
  });
  const [apiUrl] = await Promise.all([
    apiUrlOf(procs.api, 60_000),
    procs.scheduler.waitFor(/scheduler running/, 60_000),
    procs.worker.waitFor(/worker running/, 60_000),
  ]);

  const samplers = Object.fromEntries(
    Object.entries({ ...procs, fleet: { child: fleet.child } }).map(([name, p]) => [
      name,
      new RssSampler(p.child.pid!, SAMPLE_MS).start(),
    ]),
  );
  const load = new LoadGenerator({
    apiUrl,
    serverUrls: fleet.urls,
    apiKey: key.key,
    agentId: AGENT,
    rates: { report: 20, read: 20, query: 5 },
  }).start();
  const startedAt = Date.now();
  const endsAt = startedAt + MINUTES * 60_000;
  while (Date.now() < endsAt) {
    await sleep(Math.min(SAMPLE_MS, endsAt - Date.now()));
    const t = Math.round((Date.now() - startedAt) / 1000);
    const rss = Object.entries(samplers)
      .map(([n, s]) => `${n} ${mb(s.lastBytes)} MB`)
      .join(', ');
    process.stdout.write(`  ${t}s: ${load.ledger.length} requests answered; RSS ${rss}\n`);
  }
  await load.stop();
  for (const s of Object.values(samplers)) s.stop();

  // Let the last dispatched probes finish, then compare what ran with what was stored.
  procs.scheduler.child.kill('SIGTERM');
  await procs.scheduler.exited;
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const probeQueue = new Queue('probe', { connection, prefix });
  for (let i = 0; i < 60; i++) {
    const c = await probeQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    if (Object.values(c).every((n) => n === 0)) break;
    await sleep(500);
  }
  const failedJobs = await probeQueue.getFailedCount();
  const dispatched = readLog(procs.scheduler.output()).claimed;
  // why jobs failed (after all their attempts), most frequent first
  const failureReasons: Record<string, number> = {};
  for (const job of await probeQueue.getFailed(0, 999)) {
    const reason = (job.failedReason ?? 'unknown').slice(0, 120);
    failureReasons[reason] = (failureReasons[reason] ?? 0) + 1;
  }
  await probeQueue.close();
  connection.disconnect();
  const [probes] = await db.sql<{ rows: number; distinct_slots: number }[]>`
    SELECT count(*)::int AS rows, count(DISTINCT (server_id, scheduled_at))::int AS distinct_slots
    FROM probe_results`;
  const counts = await reconcile(db, load.ledger, AGENT);
  const logged = Object.fromEntries(
    Object.entries(procs).map(([name, p]) => [name, readLog(p.output()).errors]),
  );
  const bad = badAnswers(load.ledger, false);

  // RSS growth: median of the first third after the warm-up against the median of the last third.
  const rss = Object.fromEntries(
    Object.entries(samplers).map(([name, s]) => {
      const steady = s.samples.filter((x) => x.at >= startedAt + WARMUP_MS).map((x) => x.bytes);
      const third = Math.max(1, Math.floor(steady.length / 3));
      const first = median(steady.slice(0, third));
      const last = median(steady.slice(-third));
      return [
        name,
        {
          samples_mb: s.samples.map((x) => mb(x.bytes)),
          max_mb: mb(s.maxBytes),
          first_third_mb: mb(first),
          last_third_mb: mb(last),
          growth_percent: first ? Math.round(((last - first) / first) * 1000) / 10 : 0,
        },
      ];
    }),
  );
  const checks = {
    'reports sent = acknowledged': counts.reportsSent === counts.reportsAcknowledged,
    'reports acknowledged = stored':
      counts.acknowledgedLost.length === 0 && counts.strayOrDuplicateRows === 0,
    'receipts issued = receipt rows': counts.receiptsLost.length === 0,
    'probe slots dispatched = rows + failed jobs': dispatched === probes!.rows + failedJobs,
    'no probe stored twice': probes!.rows === probes!.distinct_slots,
    'no probe job failed': failedJobs === 0,
    'every answer a success': bad.length === 0,
  };
  failed = Object.values(checks).some((ok) => !ok);

  process.stdout.write('\nRSS (MB)   first⅓  last⅓   max  growth\n');
  for (const [name, r] of Object.entries(rss)) {
    process.stdout.write(
      `${name.padEnd(10)} ${String(r.first_third_mb).padStart(6)} ${String(r.last_third_mb).padStart(6)} ${String(r.max_mb).padStart(5)}  ${r.growth_percent}%\n`,
    );
  }
  process.stdout.write(
    `\nrequests: ${JSON.stringify(tally(load.ledger))}\n` +
      `reports: sent ${counts.reportsSent}, acknowledged ${counts.reportsAcknowledged}, stored ${counts.reportsStored}\n` +
      `receipts: issued ${counts.receiptsIssued}, stored ${counts.receiptsStored}\n` +
      `probes: dispatched ${dispatched}, rows ${probes!.rows}, failed jobs ${failedJobs} ${JSON.stringify(failureReasons)}\n` +
      `warnings and errors logged: ${JSON.stringify(logged)}\n\n`,
  );
  for (const [check, ok] of Object.entries(checks))
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${check}\n`);
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(
    'bench-results/soak.json',
    `${JSON.stringify(
      {
        minutes: MINUTES,
        servers: SERVERS,
        interval_s: Number(values.interval),
        rates_per_s: { report: 20, read: 20, query: 5 },
        requests: tally(load.ledger),
        bad_answers: bad.slice(0, 20),
        reports: {
          sent: counts.reportsSent,
          acknowledged: counts.reportsAcknowledged,
          stored: counts.reportsStored,
        },
        receipts: { issued: counts.receiptsIssued, stored: counts.receiptsStored },
        logged,
        probes: {
          dispatched,
          rows: probes!.rows,
          failed_jobs: failedJobs,
          failure_reasons: failureReasons,
        },
        rss,
        checks,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write('wrote bench-results/soak.json\n');
} finally {
  for (const p of Object.values(procs)) p.child.kill('SIGTERM');
  await Promise.all(Object.values(procs).map((p) => p.exited));
  fleet.child.kill('SIGTERM');
  await db.drop().catch(() => {});
  await deleteQueueKeys(REDIS_URL, prefix).catch(() => 0);
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
