/**
 * npm run bench:analyze
 *
 * The analyzer on a month of a 1,000-server fleet: 1,000 servers × 30 days of 5-minute probes
 * (8.64 M probe_results rows) plus ~100k agent reports, generated INSIDE Postgres with set-based
 * SQL on a fresh database (createTestDatabase; dropped at the end, also on failure or Ctrl-C).
 *
 * Measures
 * - a full pass, analyzeEverything(sql, now, 30): hourly + daily rollups of the whole range,
 *   category baselines, every server's trust inputs / stats / anomalies (target ≤ 30 s);
 * - an incremental pass, analyzeDirty(sql, now), after one minute of new results written
 *   through the production write path (probeResultsRepository.insertBatch, which marks the
 *   dirty (server, hour) pairs), repeated for 5 consecutive minutes (target: median ≤ 200 ms);
 * - as the in-run baseline (the machine is shared and noisy), a bare full scan of the same rows,
 *   `SELECT count(*), avg(total_ms) FROM probe_results`, so the full pass reads as "N× a scan".
 *
 * Where the time goes: while the passes run, a second connection samples pg_stat_activity every
 * 25 ms and charges each interval to the analyzer's statement active at that moment ("client" when
 * none is: JS work and round trips). Writes bench-results/analyze.json.
 * Env: BENCH_SERVERS (default 1000), BENCH_DAYS (default 30) — smaller values for a quick try;
 * BENCH_KEEP_DB=1 keeps the database afterwards (its URL is printed) to EXPLAIN statements on it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProbeResult } from '@observatory/core';
import {
  auditRepository,
  type InteractionReportRecord,
  type ProbeResultRecord,
  probeResultsRepository,
  reportAuditEvent,
  type Sql,
} from '@observatory/db';
import { createTestDatabase, type TestDatabase } from '@observatory/db/testing';
import { jobIds } from '@observatory/queue';
import { analyzeDirty, analyzeEverything } from '@observatory/service';
import { median } from 'simple-statistics';

const SERVERS = Number(process.env.BENCH_SERVERS ?? 1000);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const INTERVAL_S = 300;
const SLOTS_PER_DAY = 86_400 / INTERVAL_S;
const REPORTS = Math.round(100 * SERVERS);
const INCREMENTAL_MINUTES = 5;
const TARGET_FULL_S = 30;
const TARGET_INCREMENTAL_MS = 200;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const CATEGORIES = [
  'weather',
  'finance',
  'code',
  'data',
  'search',
  'compliance',
  'transport',
  'productivity',
  'communication',
  'other',
];

// The data ends at the last full hour, so a full pass sees exactly SERVERS × DAYS × 24 hours.
const end = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
const base = new Date(end.getTime() - DAYS * DAY_MS);

const started = performance.now();
const elapsed = async <T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> => {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
};
const log = (msg: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${msg}`);

/**
 * CPU milliseconds used so far by each backend serving this database, from /proc (Postgres runs
 * on this machine): on a shared, busy box CPU time says more than wall time. null when /proc
 * is not readable.
 */
async function backendCpu(sql: Sql, exclude: number[]): Promise<Map<number, number> | null> {
  const pids = await sql<{ pid: number }[]>`
    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> ALL(${exclude}::int[])`;
  const cpu = new Map<number, number>();
  try {
    for (const { pid } of pids) {
      // fields after "(comm) ": state is [0], utime [11], stime [12], in clock ticks (100 Hz)
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      cpu.set(pid, (Number(fields[11]) + Number(fields[12])) * 10);
    }
  } catch {
    return null;
  }
  return cpu;
}

interface Measured<T> {
  ms: number;
  value: T;
  /** CPU of the database backends (approximate: one that closes mid-run is missed); null if unknown. */
  db_cpu_ms: number | null;
  node_cpu_ms: number;
}

/** Wall time plus the CPU the run cost this process and the database's backends. */
async function measure<T>(sql: Sql, exclude: number[], f: () => Promise<T>): Promise<Measured<T>> {
  const db0 = await backendCpu(sql, exclude);
  const node0 = process.cpuUsage();
  const { ms, value } = await elapsed(f);
  const node = process.cpuUsage(node0);
  const db1 = await backendCpu(sql, exclude);
  const db_cpu_ms =
    db0 && db1 ? [...db1].reduce((sum, [pid, used]) => sum + used - (db0.get(pid) ?? 0), 0) : null;
  return { ms, value, db_cpu_ms, node_cpu_ms: (node.user + node.system) / 1000 };
}

/**
 * Per-server behaviour, drawn once: a log-normal median latency across the fleet, its own spread,
 * a failure share (most servers steady, some flaky), a few that always demand auth, and dead
 * stretches (a few hours to two days; 1% of servers are dead right now).
 */
async function createProfiles(sql: Sql): Promise<void> {
  await sql`
    CREATE TABLE bench_profile (
      server_id bigint PRIMARY KEY, phase_s integer NOT NULL, median_ms double precision NOT NULL,
      sigma double precision NOT NULL, fail_share double precision NOT NULL, auth_only boolean NOT NULL,
      dead_from timestamptz, dead_to timestamptz, tool_count integer NOT NULL, tools_hash text NOT NULL)`;
  await sql`
    INSERT INTO bench_profile
    SELECT id, (id * 131) % ${INTERVAL_S},
      exp(ln(180) + 0.8 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random())),
      0.15 + 0.35 * random(),
      CASE WHEN kind < 0.12 THEN 0.02 + 0.13 * random() ELSE 0.002 END,
      kind >= 0.98,
      CASE WHEN dead < 0.01 THEN ${end}::timestamptz - (2 + 34 * random()) * interval '1 hour'
           WHEN dead < 0.07 THEN ${base}::timestamptz + random() * ${DAYS - 2} * interval '1 day' END,
      NULL, 1 + (id % 24), encode(sha256(('tools-' || id)::bytea), 'hex')
    FROM (SELECT id, random() AS kind, random() AS dead FROM servers) s`;
  await sql`
    UPDATE bench_profile SET dead_to = least(dead_from + (1 + 47 * random()) * interval '1 hour', ${end}::timestamptz)
    WHERE dead_from IS NOT NULL`;
}

/**
 * One day's partition of probe rows, bulk-loaded the way large imports are: filled as a plain
 * table, indexed once (a sorted build is ~3× faster than growing three B-trees row by row), then
 * attached. The result is the partition ensure_probe_partitions makes — same name, bounds,
 * constraints and indexes — holding every server's probes of that day in time order, as the
 * writers would have left it.
 */
async function loadProbeDay(sql: Sql, day: Date): Promise<void> {
  const next = new Date(day.getTime() + DAY_MS);
  const name = `probe_results_${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
  const from = Math.max(day.getTime(), base.getTime());
  const to = Math.min(next.getTime(), end.getTime());
  // slot k of a server is base + k·interval + its phase; take the k that can land in [from, to)
  const firstSlot = Math.max(0, Math.floor((from - base.getTime()) / 1000 / INTERVAL_S) - 1);
  const lastSlot = Math.min(DAYS * SLOTS_PER_DAY - 1, Math.ceil((to - base.getTime()) / 1000 / INTERVAL_S));
  // the migration pre-creates (empty) partitions around today: replace them
  await sql`DROP TABLE IF EXISTS ${sql(name)}`;
  await sql`CREATE TABLE ${sql(name)} (LIKE probe_results INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`;
  await sql`
    INSERT INTO ${sql(name)} (probe_id, scheduled_at, server_id, started_at, outcome, error_type, error_message,
      http_status, transport, connect_ms, initialize_ms, ping_ms, tools_list_ms, total_ms, protocol_version,
      server_info, tool_count, tools_hash, recorded_at)
    SELECT 'probe-' || server_id || '-' || (extract(epoch FROM slot) * 1000)::bigint, slot, server_id, started_at,
      outcome, error_type,
      CASE error_type WHEN 'timeout' THEN 'no answer within 10000 ms' WHEN 'http_5xx' THEN 'HTTP 503'
        WHEN 'connect' THEN 'connect ECONNREFUSED' WHEN 'auth' THEN 'HTTP 401' END,
      CASE WHEN outcome IN ('up', 'degraded') THEN 200 WHEN outcome = 'auth_required' THEN 401
        WHEN error_type = 'http_5xx' THEN 503 END,
      CASE WHEN outcome IN ('up', 'degraded', 'not_mcp') THEN 'streamable_http' END,
      CASE WHEN error_type IS DISTINCT FROM 'connect' THEN total_ms * 0.25 END,
      CASE WHEN outcome IN ('up', 'degraded') THEN total_ms * 0.35 END,
      CASE WHEN outcome = 'up' THEN total_ms * 0.15 END,
      CASE WHEN outcome = 'up' THEN total_ms * 0.25 END,
      total_ms,
      CASE WHEN outcome IN ('up', 'degraded') THEN '2025-06-18' END,
      CASE WHEN outcome IN ('up', 'degraded') THEN jsonb_build_object('name', 'bench-' || server_id, 'version', '1.0.0') END,
      CASE WHEN outcome = 'up' THEN tool_count END,
      CASE WHEN outcome = 'up' THEN tools_hash END,
      started_at + (total_ms + 40) * interval '1 millisecond'
    FROM (
      SELECT server_id, slot, tool_count, tools_hash, outcome,
        slot + (u_kind * 2000) * interval '1 millisecond' AS started_at,
        CASE
          WHEN outcome = 'down' AND u_kind < 0.6 THEN 'timeout'
          WHEN outcome = 'down' AND u_kind < 0.85 THEN 'http_5xx'
          WHEN outcome = 'down' THEN 'connect'
          WHEN outcome = 'not_mcp' THEN 'invalid_response'
          WHEN outcome = 'auth_required' THEN 'auth'
          WHEN outcome = 'degraded' THEN 'ping_failed'
        END AS error_type,
        CASE
          WHEN outcome IN ('up', 'degraded') THEN median_ms * exp(sigma * normal) * (CASE WHEN outcome = 'degraded' THEN 2 ELSE 1 END)
          WHEN outcome = 'down' AND u_kind < 0.6 THEN 10000 + 50 * u_kind
          ELSE median_ms * 0.3 * exp(0.3 * normal)
        END AS total_ms
      FROM (
        SELECT server_id, slot, tool_count, tools_hash, median_ms, sigma, u_kind, normal,
          CASE
            WHEN auth_only THEN 'auth_required'
            WHEN slot >= dead_from AND slot < dead_to THEN 'down'
            WHEN u_out < fail_share THEN CASE WHEN u_kind < 0.9 THEN 'down' ELSE 'not_mcp' END
            WHEN u_out < fail_share + 0.001 THEN 'auth_required'
            WHEN u_out > 0.99 THEN 'degraded'
            ELSE 'up'
          END AS outcome
        FROM (
          -- volatile draws in a subquery's target list are made once per row and kept
          SELECT p.*, slot, random() AS u_out, random() AS u_kind,
            sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS normal
          FROM generate_series(${firstSlot}::int, ${lastSlot}::int) AS k, bench_profile p,
            LATERAL (SELECT ${base}::timestamptz + (k * ${INTERVAL_S} + p.phase_s) * interval '1 second' AS slot) s
          WHERE slot >= ${new Date(from)} AND slot < ${new Date(to)}
          ORDER BY slot, p.server_id
        ) draws
      ) outcomes
    ) rows`;
  await sql`ALTER TABLE ${sql(name)} ADD PRIMARY KEY (probe_id, scheduled_at)`;
  await sql`CREATE INDEX ON ${sql(name)} (server_id, scheduled_at)`;
  await sql`CREATE INDEX ON ${sql(name)} (recorded_at)`;
  // What autovacuum would have done long before a month is analyzed: statistics, hint bits and the
  // visibility map, or the first reader pays for them. Per partition, as autovacuum works: it
  // never analyzes the partitioned parent itself.
  await sql`VACUUM (ANALYZE) ${sql(name)}`;
  // a CHECK matching the bounds spares ATTACH its validation scan; the indexes are adopted as-is
  await sql`
    ALTER TABLE ${sql(name)} ADD CONSTRAINT bench_bounds
    CHECK (scheduled_at IS NOT NULL AND scheduled_at >= ${timestamp(sql, day)} AND scheduled_at < ${timestamp(sql, next)})`;
}

/** A timestamptz literal: DDL takes no bind parameters. */
const timestamp = (sql: Sql, d: Date) => sql.unsafe(`'${d.toISOString()}'::timestamptz`);

/** Attaches a loaded day (one at a time: ATTACH locks the parent) and drops the helper CHECK. */
async function attachProbeDay(sql: Sql, day: Date): Promise<void> {
  const name = `probe_results_${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
  await sql`
    ALTER TABLE probe_results ATTACH PARTITION ${sql(name)}
    FOR VALUES FROM (${timestamp(sql, day)}) TO (${timestamp(sql, new Date(day.getTime() + DAY_MS))})`;
  await sql`ALTER TABLE ${sql(name)} DROP CONSTRAINT bench_bounds`;
}

/**
 * Agent reports, skewed: a few popular servers get most, many get none; agents likewise. Drawn in
 * SQL, then stored as the API stores them: as audit events (interaction_reports is a view of the
 * log), appended in time order through the audit repository.
 */
async function insertReports(sql: Sql): Promise<void> {
  await sql`
    CREATE UNLOGGED TABLE bench_reports AS
    SELECT row_number() OVER (ORDER BY received_at, i) AS n, 'rpt_bench_' || i AS report_id, r.server_id, agent_id,
      received_at, success,
      CASE WHEN success THEN p.median_ms * 1.5 * exp(0.5 * normal) WHEN u < 0.5 THEN 10000 END AS latency_ms,
      'tool_' || (i % p.tool_count) AS tool_name, CASE WHEN NOT success THEN 'timeout' END AS error_type,
      CASE WHEN success THEN 200 END AS http_status
    FROM (
      SELECT i, 1 + floor(${SERVERS} * power(random(), 3))::int AS server_id,
        'agent-' || (1 + floor(300 * power(random(), 2)))::int AS agent_id,
        ${base}::timestamptz + random() * ${DAYS} * interval '1 day' AS received_at,
        random() AS u, sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) AS normal
      FROM generate_series(1, ${REPORTS}::int) AS i
    ) r JOIN bench_profile p ON p.server_id = r.server_id,
    LATERAL (SELECT NOT p.auth_only AND coalesce(NOT (r.received_at >= p.dead_from AND r.received_at < p.dead_to), true)
      AND r.u > 0.03 + p.fail_share AS success) s`;
  const audit = auditRepository(sql);
  for (let from = 1; ; from += 5_000) {
    const batch = await sql<InteractionReportRecord[]>`
      SELECT report_id, server_id::int, agent_id, NULL::bigint AS key_id, received_at, success, latency_ms,
        tool_name, error_type, NULL::text AS error_message, http_status
      FROM bench_reports WHERE n >= ${from} AND n < ${from + 5_000} ORDER BY n`;
    if (batch.length === 0) break;
    await audit.append(batch.map(reportAuditEvent));
  }
  await sql`DROP TABLE bench_reports`;
}

/** Each server's probe state as the result writer would have left it after the last probe. */
async function setServerState(sql: Sql): Promise<void> {
  // Dead stretches last at most two days, so the last three days settle every streak.
  await sql`
    WITH recent AS (
      SELECT server_id, scheduled_at, started_at, outcome, total_ms FROM probe_results
      WHERE scheduled_at >= ${new Date(end.getTime() - 3 * DAY_MS)}
    ),
    last AS (SELECT DISTINCT ON (server_id) * FROM recent ORDER BY server_id, scheduled_at DESC),
    last_ok AS (SELECT server_id, max(scheduled_at) AS at FROM recent WHERE outcome NOT IN ('down', 'not_mcp') GROUP BY 1),
    last_up AS (SELECT server_id, max(started_at) AS at FROM recent WHERE outcome IN ('up', 'degraded') GROUP BY 1),
    streak AS (
      SELECT r.server_id, count(*)::int AS n FROM recent r LEFT JOIN last_ok o ON o.server_id = r.server_id
      WHERE r.outcome IN ('down', 'not_mcp') AND r.scheduled_at > coalesce(o.at, '-infinity') GROUP BY 1
    )
    UPDATE servers s SET last_outcome = last.outcome, last_probe_at = last.started_at, last_up_at = last_up.at,
      consecutive_failures = coalesce(streak.n, 0), last_latency_ms = last.total_ms,
      protocol_version = '2025-06-18', server_info = jsonb_build_object('name', 'bench-' || s.id, 'version', '1.0.0'),
      tools_hash = p.tools_hash,
      tools = (SELECT jsonb_agg(jsonb_build_object('name', 'tool_' || t, 'hash', md5(p.tools_hash || t)) ORDER BY t)
               FROM generate_series(0, p.tool_count - 1) t),
      next_probe_at = ${end}::timestamptz + p.phase_s * interval '1 second'
    FROM last JOIN bench_profile p ON p.server_id = last.server_id
      LEFT JOIN last_up ON last_up.server_id = last.server_id
      LEFT JOIN streak ON streak.server_id = last.server_id
    WHERE s.id = last.server_id`;
}

async function generate(sql: Sql) {
  await sql`
    INSERT INTO servers (url, slug, name, category, source, created_at, updated_at, next_probe_at)
    SELECT format('https://mcp-%s.bench.example/mcp', i), format('bench-%s', i), format('Bench server %s', i),
      -- skewed: the first categories are the common ones
      (${CATEGORIES}::text[])[1 + floor(${CATEGORIES.length} * power(random(), 1.6))::int], 'registered', ${base}, ${base}, ${end}
    FROM generate_series(1, ${SERVERS}::int) AS i`;
  await createProfiles(sql);
  // One day (partition) per statement, two at a time (two cores).
  const firstDay = Math.floor(base.getTime() / DAY_MS) * DAY_MS;
  const days = Array.from(
    { length: Math.ceil((end.getTime() - firstDay) / DAY_MS) },
    (_, d) => new Date(firstDay + d * DAY_MS),
  );
  const queue = [...days];
  const worker = async () => {
    for (let day = queue.shift(); day !== undefined; day = queue.shift()) {
      await loadProbeDay(sql, day);
      log(`  ${day.toISOString().slice(0, 10)} loaded`);
    }
  };
  await Promise.all([worker(), worker()]);
  for (const day of days) await attachProbeDay(sql, day);
  // the partitions the incremental minutes write into
  await probeResultsRepository(sql).ensurePartitions(end, new Date(end.getTime() + DAY_MS));
  await insertReports(sql);
  await setServerState(sql);
  await sql`VACUUM (ANALYZE) audit_events, audit_tree_nodes, servers`;
}

/** The rows counted for the report and checked against what the rollups say they saw. */
async function counts(sql: Sql) {
  const [row] = await sql<
    { probes: number; reports: number; servers: number; outcomes: Record<string, number> }[]
  >`
    SELECT (SELECT count(*) FROM probe_results)::int AS probes, (SELECT count(*) FROM interaction_reports)::int AS reports,
      (SELECT count(*) FROM servers)::int AS servers,
      (SELECT jsonb_object_agg(outcome, n) FROM (SELECT outcome, count(*)::int AS n FROM probe_results GROUP BY 1) o) AS outcomes`;
  return row!;
}

/** The bare scan the full pass is compared with: the same rows, read once, no work per row. */
async function bareScanMs(sql: Sql): Promise<number> {
  await sql`SELECT count(*), avg(total_ms) FROM probe_results`; // warm the OS cache like the pass will find it
  const samples: number[] = [];
  for (let i = 0; i < 3; i++)
    samples.push((await elapsed(() => sql`SELECT count(*), avg(total_ms) FROM probe_results`)).ms);
  return median(samples);
}

/** Does the full pass's output look right? Every probe and report lands in exactly one hourly rollup. */
async function checkFullPass(sql: Sql, expected: { probes: number; reports: number }) {
  const [row] = await sql<
    {
      hourly: number;
      daily: number;
      probes_rolled: number;
      reports_rolled: number;
      servers_analyzed: number;
      baselines: number;
      open_anomalies: number;
      verdicts: Record<string, number>;
    }[]
  >`
    SELECT (SELECT count(*) FROM rollups_hourly)::int AS hourly, (SELECT count(*) FROM rollups_daily)::int AS daily,
      (SELECT sum(probes + inconclusive) FROM rollups_hourly)::int AS probes_rolled,
      (SELECT sum(reports) FROM rollups_hourly)::int AS reports_rolled,
      (SELECT count(*) FROM servers WHERE trust_inputs IS NOT NULL AND stats IS NOT NULL AND analyzed_at IS NOT NULL)::int
        AS servers_analyzed,
      (SELECT count(*) FROM baselines WHERE samples > 0)::int AS baselines,
      (SELECT count(*) FROM anomalies WHERE cleared_at IS NULL)::int AS open_anomalies,
      (SELECT jsonb_object_agg(coalesce(trust_verdict, 'none'), n)
        FROM (SELECT trust_verdict, count(*)::int AS n FROM servers GROUP BY 1) v) AS verdicts`;
  const r = row!;
  const problems = [
    r.hourly !== SERVERS * DAYS * 24 &&
      `rollups_hourly has ${r.hourly} rows, expected ${SERVERS * DAYS * 24}`,
    r.probes_rolled !== expected.probes &&
      `rollups count ${r.probes_rolled} probes, table has ${expected.probes}`,
    r.reports_rolled !== expected.reports &&
      `rollups count ${r.reports_rolled} reports, table has ${expected.reports}`,
    r.servers_analyzed !== SERVERS &&
      `${r.servers_analyzed} of ${SERVERS} servers have trust_inputs and stats`,
    r.baselines < CATEGORIES.length && `only ${r.baselines} category baselines have samples`,
  ].filter((p): p is string => typeof p === 'string');
  return { ...r, problems };
}

interface ServerProfile {
  id: number;
  phase_s: number;
  median_ms: number;
  sigma: number;
  fail_share: number;
  auth_only: boolean;
  tools_hash: string;
  tools: Array<{ name: string; hash: string }>;
}

/** One probe result as the prober would hand it over, drawn from the server's profile. */
function probeResult(p: ServerProfile, startedAt: Date): ProbeResult {
  const normal = Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  const failed = !p.auth_only && Math.random() < p.fail_share;
  const outcome = p.auth_only ? 'auth_required' : failed ? 'down' : 'up';
  const total =
    outcome === 'up' ? p.median_ms * Math.exp(p.sigma * normal) : failed ? 10_000 : p.median_ms * 0.3;
  const up = outcome === 'up';
  return {
    outcome,
    error_type: up ? null : failed ? 'timeout' : 'auth',
    error_message: up ? null : failed ? 'no answer within 10000 ms' : 'HTTP 401',
    http_status: up ? 200 : failed ? null : 401,
    timings: {
      connect_ms: total * 0.25,
      initialize_ms: up ? total * 0.35 : null,
      ping_ms: up ? total * 0.15 : null,
      tools_list_ms: up ? total * 0.25 : null,
      total_ms: total,
    },
    transport: up ? 'streamable_http' : null,
    protocol_version: up ? '2025-06-18' : null,
    server_info: up ? { name: `bench-${p.id}`, version: '1.0.0' } : null,
    tool_count: up ? p.tools.length : null,
    tools_hash: up ? p.tools_hash : null,
    tools: up ? p.tools : null,
    auth_resource_metadata: null,
    started_at: startedAt,
  };
}

/** Minute m after the data ends: the servers whose 5-minute phase falls in it probe once. */
function minuteOfResults(profiles: ServerProfile[], minute: number): ProbeResultRecord[] {
  return profiles
    .filter((p) => Math.floor(p.phase_s / 60) === minute % (INTERVAL_S / 60))
    .map((p) => {
      const slot = new Date(
        end.getTime() + (Math.floor(minute / (INTERVAL_S / 60)) * INTERVAL_S + p.phase_s) * 1000,
      );
      return {
        probe_id: jobIds.probe(p.id, slot),
        server_id: p.id,
        scheduled_at: slot,
        result: probeResult(p, new Date(slot.getTime() + 400)),
      };
    });
}

/**
 * Statement kinds of the analyzer, by text that names them within the first 1 kB (pg_stat_activity
 * keeps no more: the recomputes' INSERT lines come too late); anything else by its first words.
 */
const STATEMENT_KINDS: Array<[RegExp, string]> = [
  [/JOIN probe_results r/, 'recompute rollups_hourly'],
  [/JOIN rollups_hourly h/, 'recompute rollups_daily'],
  [/rollup_dirty/, 'take / clear dirty marks'],
  [/FROM rollups_daily d JOIN servers|INSERT INTO baselines/, 'category baselines'],
  [/FROM rollups_hourly\s+WHERE server_id = ANY/, 'read hourly rollups'],
  [/FROM rollups_daily\s+WHERE server_id = ANY/, 'read daily rollups'],
  [/row_number\(\) OVER/, 'read recent probes'],
  [/anomalies/, 'anomalies'],
  [/UPDATE servers|UPDATE rollups_daily|SELECT \* FROM servers/, 'save analysis'],
];

const statementKind = (query: string) =>
  STATEMENT_KINDS.find(([re]) => re.test(query))?.[1] ?? query.replace(/\s+/g, ' ').trim().slice(0, 40);

/**
 * A sampling profile of one database's statements: every `everyMs`, the active statement of the
 * other sessions on it (the analyzer runs one at a time) is charged the interval. Cheap enough to
 * leave on during the timed passes (one tiny query per sample).
 */
async function profileStatements(sql: Sql, everyMs = 25) {
  // its own connection, so its pid can be left out of the CPU accounting
  const conn = await sql.reserve();
  const [{ pid } = { pid: 0 }] = await conn<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const charged = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    let last = performance.now();
    while (running) {
      await new Promise((r) => setTimeout(r, everyMs));
      const rows = await conn<{ query: string }[]>`
        SELECT query FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`;
      const now = performance.now();
      const kind = rows[0] ? statementKind(rows[0].query) : 'client (no statement active)';
      charged.set(kind, (charged.get(kind) ?? 0) + (now - last));
      last = now;
    }
  })();
  return {
    pid,
    /** Stops sampling; milliseconds per statement kind, largest first. */
    async stop(): Promise<Record<string, number>> {
      running = false;
      await loop;
      conn.release();
      return Object.fromEntries(
        [...charged].sort((a, b) => b[1] - a[1]).map(([k, ms]) => [k, Math.round(ms)]),
      );
    },
  };
}

/** The statement kinds worth a table row (≥ 3% of the sampled time), with their share of it. */
function topKinds(breakdown: Record<string, number>): Array<[string, number, number]> {
  const total = Object.values(breakdown).reduce((a, b) => a + b, 0);
  return Object.entries(breakdown)
    .filter(([, ms]) => ms >= 0.03 * total)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, ms]) => [kind, ms, ms / total]);
}

const roundAll = (r: Record<string, number>) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)]));

const nullableMedian = (values: Array<number | null>) =>
  values.every((v) => v !== null) ? median(values as number[]) : null;

async function run(db: TestDatabase) {
  const { sql } = db;
  const [pg] = await sql<{ version: string; shared_buffers: string; work_mem: string }[]>`
    SELECT version(), current_setting('shared_buffers') AS shared_buffers, current_setting('work_mem') AS work_mem`;
  log(
    `generating ${SERVERS} servers × ${DAYS} days of ${INTERVAL_S / 60}-minute probes ending ${end.toISOString()}`,
  );
  const generation = await elapsed(() => generate(sql));
  log(`generated in ${(generation.ms / 1000).toFixed(1)} s`);
  const rows = await counts(sql);
  log(`${rows.probes.toLocaleString('en-US')} probe rows, ${rows.reports.toLocaleString('en-US')} reports`);
  const [size] = await sql<{ bytes: number }[]>`
    SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'probe_results'::regclass`;

  const scanMs = await bareScanMs(sql);
  log(`bare scan ${scanMs.toFixed(0)} ms; full pass …`);

  const fullProfile = await profileStatements(sql);
  const full = await measure(sql, [fullProfile.pid], () => analyzeEverything(sql, end, DAYS));
  const fullBreakdown = await fullProfile.stop();
  const check = await checkFullPass(sql, rows);
  log(
    `full pass ${(full.ms / 1000).toFixed(2)} s${check.problems.length ? ` — PROBLEMS: ${check.problems.join('; ')}` : ''}`,
  );

  log(`where the time went: ${JSON.stringify(fullBreakdown)}`);

  const profiles = await sql<ServerProfile[]>`
    SELECT p.server_id AS id, p.phase_s, p.median_ms, p.sigma, p.fail_share, p.auth_only, s.tools_hash, s.tools
    FROM bench_profile p JOIN servers s ON s.id = p.server_id ORDER BY p.server_id`;
  const incremental: Array<{
    minute: number;
    rows: number;
    insert_ms: number;
    marks: number;
    servers: number;
    analyze_ms: number;
    db_cpu_ms: number | null;
    node_cpu_ms: number;
  }> = [];
  const incrementalBreakdown: Record<string, number> = {};
  for (let minute = 0; minute < INCREMENTAL_MINUTES; minute++) {
    const records = minuteOfResults(profiles, minute);
    const insert = await elapsed(() =>
      probeResultsRepository(sql).insertBatch(records, { intervalSeconds: INTERVAL_S }),
    );
    const now = new Date(end.getTime() + (minute + 1) * 60_000);
    const profile = await profileStatements(sql, 10);
    const pass = await measure(sql, [profile.pid], () => analyzeDirty(sql, now));
    for (const [kind, ms] of Object.entries(await profile.stop())) {
      incrementalBreakdown[kind] = (incrementalBreakdown[kind] ?? 0) + ms / INCREMENTAL_MINUTES;
    }
    incremental.push({
      minute,
      rows: insert.value.length,
      insert_ms: insert.ms,
      marks: pass.value.marks,
      servers: pass.value.servers,
      analyze_ms: pass.ms,
      db_cpu_ms: pass.db_cpu_ms,
      node_cpu_ms: pass.node_cpu_ms,
    });
    log(
      `minute ${minute + 1}: ${records.length} rows, analyzeDirty ${pass.ms.toFixed(0)} ms (${pass.value.marks} marks)`,
    );
  }
  const incMs = incremental.map((i) => i.analyze_ms);
  const incMedian = median(incMs);
  const incMax = Math.max(...incMs);

  const results = {
    benchmark: 'analyze',
    generated_at: new Date().toISOString(),
    machine: {
      node: process.version,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      load_average: os.loadavg(),
      postgres: pg!.version,
      shared_buffers: pg!.shared_buffers,
      work_mem: pg!.work_mem,
    },
    data: {
      servers: rows.servers,
      days: DAYS,
      interval_seconds: INTERVAL_S,
      probe_rows: rows.probes,
      probe_outcomes: rows.outcomes,
      report_rows: rows.reports,
      probe_results_bytes: Number(size!.bytes),
      window: { from: base.toISOString(), to: end.toISOString() },
      generation_s: generation.ms / 1000,
    },
    baseline: { bare_scan_ms: scanMs, bare_scan_rows_per_s: rows.probes / (scanMs / 1000) },
    full_pass: {
      seconds: full.ms / 1000,
      probe_rows_per_s: rows.probes / (full.ms / 1000),
      ratio_to_bare_scan: full.ms / scanMs,
      db_cpu_s: full.db_cpu_ms === null ? null : full.db_cpu_ms / 1000,
      node_cpu_s: full.node_cpu_ms / 1000,
      result: full.value,
      where_the_time_went_ms: fullBreakdown,
      check,
    },
    incremental_pass: {
      runs: incremental,
      median_ms: incMedian,
      max_ms: incMax,
      ratio_median_to_bare_scan: incMedian / scanMs,
      median_db_cpu_ms: nullableMedian(incremental.map((i) => i.db_cpu_ms)),
      median_node_cpu_ms: median(incremental.map((i) => i.node_cpu_ms)),
      // per pass, averaged over the minutes
      where_the_time_went_ms: roundAll(incrementalBreakdown),
    },
    targets: {
      full_pass_s: TARGET_FULL_S,
      incremental_median_ms: TARGET_INCREMENTAL_MS,
      full_pass_met: full.ms / 1000 <= TARGET_FULL_S,
      incremental_met: incMedian <= TARGET_INCREMENTAL_MS,
      checks_passed: check.problems.length === 0,
    },
    total_seconds: (performance.now() - started) / 1000,
  };

  const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
  const cpuShare = (m: Measured<unknown>) =>
    m.db_cpu_ms === null ? '?' : `${n0((100 * (m.db_cpu_ms + m.node_cpu_ms)) / m.ms)}%`;
  const cpuText = (ms: number | null, per: number, unit: string) =>
    ms === null ? '?' : `${per === 1 ? n0(ms) : (ms / per).toFixed(1)} ${unit}`;
  const table: Array<[string, string, string]> = [
    [
      'data',
      `${n0(rows.probes)} probes, ${n0(rows.reports)} reports`,
      `${(Number(size!.bytes) / 2 ** 30).toFixed(2)} GiB raw`,
    ],
    [
      'generation (set-based SQL)',
      `${(generation.ms / 1000).toFixed(1)} s`,
      'not a target (vacuum analyze included)',
    ],
    [
      'bare scan count/avg (baseline)',
      `${n0(scanMs)} ms`,
      `${n0(results.baseline.bare_scan_rows_per_s)} rows/s`,
    ],
    [
      'full pass analyzeEverything',
      `${(full.ms / 1000).toFixed(2)} s`,
      `${n0(results.full_pass.probe_rows_per_s)} rows/s, ${results.full_pass.ratio_to_bare_scan.toFixed(1)}× scan`,
    ],
    [
      '  CPU used (database / node)',
      `${cpuText(full.db_cpu_ms, 1000, 's')} / ${(full.node_cpu_ms / 1000).toFixed(1)} s`,
      `(database + node) = ${cpuShare(full)} of wall`,
    ],
    ...topKinds(fullBreakdown).map(([kind, ms, share]): [string, string, string] => [
      `  ${kind}`,
      `${(ms / 1000).toFixed(2)} s`,
      `${n0(100 * share)}%`,
    ]),
    [
      'incremental pass analyzeDirty',
      `median ${n0(incMedian)} ms`,
      `max ${n0(incMax)} ms over ${INCREMENTAL_MINUTES} minutes of ~${n0(median(incremental.map((i) => i.rows)))} rows`,
    ],
    [
      '  CPU used, median (database / node)',
      `${cpuText(results.incremental_pass.median_db_cpu_ms, 1, 'ms')} / ${n0(results.incremental_pass.median_node_cpu_ms)} ms`,
      '',
    ],
    ...topKinds(incrementalBreakdown).map(([kind, ms, share]): [string, string, string] => [
      `  ${kind}`,
      `${n0(ms)} ms`,
      `${n0(100 * share)}%`,
    ]),
    [
      'insertBatch of those rows (write path)',
      `median ${n0(median(incremental.map((i) => i.insert_ms)))} ms`,
      'not a target',
    ],
  ];
  const widths = [0, 1, 2].map((c) => Math.max(...table.map((r) => r[c]!.length)));
  console.log(
    `\nanalyze benchmark — ${results.machine.cpu} × ${results.machine.cores}, node ${process.version}, ${pg!.version.split(' on ')[0]}\n`,
  );
  for (const row of table) console.log(row.map((cell, c) => cell.padEnd(widths[c]!)).join('  │  '));
  console.log(
    `\ntargets: full pass ${results.targets.full_pass_met ? 'MET' : 'MISSED'} (≤ ${TARGET_FULL_S} s), ` +
      `incremental ${results.targets.incremental_met ? 'MET' : 'MISSED'} (median ≤ ${TARGET_INCREMENTAL_MS} ms), ` +
      `checks ${check.problems.length === 0 ? 'OK' : `FAILED: ${check.problems.join('; ')}`} — ` +
      `verdicts ${JSON.stringify(check.verdicts)}, ${check.open_anomalies} open anomalies — ${results.total_seconds.toFixed(0)} s total`,
  );

  const out = path.join(process.cwd(), 'bench-results', 'analyze.json');
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
  if (check.problems.length > 0) process.exitCode = 1;
}

const keep = process.env.BENCH_KEEP_DB === '1';
const db = await createTestDatabase({ poolMax: 4 });
// Ctrl-C must not leave a multi-gigabyte database behind.
process.once('SIGINT', () => {
  void db.drop().finally(() => process.exit(130));
});
try {
  await run(db);
} finally {
  if (keep) {
    await db.close();
    console.log(`kept ${db.url} (DROP DATABASE it when done)`);
  } else {
    await db.drop();
  }
}
