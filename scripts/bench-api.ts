/**
 * npm run bench:api
 *
 * The public HTTP API as users run it: `observatory api` in its own process (node --import tsx
 * apps/cli/src/main.ts api), under autocannon (its own process too, 100 keep-alive connections),
 * beside a bare Fastify hello-world served by a third process of the same kind and measured in
 * the same run — so each route is reported as a ratio to what Fastify alone does on this machine.
 *
 * Rows, per storage mode (distributed: a fresh Postgres database + Redis; embedded: PGlite in a
 * fresh data dir):
 * - bare GET /hello                      the baseline of the GET rows
 * - GET /api/trust?url=…                 a tracked server with real probe data
 * - GET /agent-query/<url>               metered and signed: a receipt per answer (the key's
 *                                        trial_limit is raised to 1,000,000 for the bench)
 * - bare POST /echo                      the baseline of the POST row
 * - POST /api/report                     a fixed number of requests (so none is cut off at the
 *                                        end); afterwards the rows stored must equal the 2xx answers
 * Server CPU per request is read from /proc for each process, so the ratios can be checked on
 * a machine that is busy with other work.
 * Each measurement is split into BENCH_ROUNDS rounds (default 3): bare, then the routes compared
 * with it, back to back, round after round. A route's ratio is the median of its per-round ratios
 * (in the JSON, ratio_to_bare_by_round): this shared VM's speed was seen to drift by 2x between
 * runs minutes apart, which one bare measurement before all routes cannot absorb. A row's p99 is
 * its worst round's, its p50 the median round's.
 *
 * Targets: /api/trust ≥ 50 % of bare with p99 ≤ 25 ms; /agent-query ≥ 30 % of bare;
 * POST /api/report ≥ 10,000/s with zero loss.
 * Env: BENCH_SECONDS (default 10, per measurement, over all rounds), BENCH_ROUNDS (default 3),
 * BENCH_MODES (default "distributed,embedded"),
 * BENCH_CPU_PROF=1 (write a V8 CPU profile of each observatory process to bench-results/profiles),
 * BENCH_ROWS (default "trust,agent-query,report": which observatory rows to measure; the bare rows
 * they compare with always run).
 * In distributed mode the CPU of the Postgres backends serving the bench database is read from
 * /proc too (db cpu µs/req), so a limit in the database shows up next to one in the api process.
 * The load generator's CPU (load cpu µs/req) is read too, once it has exited: it shares the
 * machine's cores, so `cpu-bound req/s` — all cores divided by server + database + load
 * generator CPU per request — is the rate at which the route would saturate this machine.
 * Writes bench-results/api.json.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { createRepositories, type Database, migrate, openDatabase } from '@observatory/db';
import { createTestDatabase } from '@observatory/db/testing';
import { normalizeServerUrl, probe } from '@observatory/probe';
import { jobIds } from '@observatory/queue';
import { deleteQueueKeys } from '@observatory/queue/testing';
import { analyzeDirty, generateApiKey } from '@observatory/service';
import { startFleet } from '@observatory/testkit';
import Fastify from 'fastify';
import { median } from 'simple-statistics';
import { cpuSeconds, reapedChildrenCpuSeconds } from './lib/process-stats.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const MODES = (process.env.BENCH_MODES ?? 'distributed,embedded').split(',') as Array<
  'distributed' | 'embedded'
>;
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const ROWS = new Set((process.env.BENCH_ROWS ?? 'trust,agent-query,report').split(','));
/** Measurements are split into this many rounds of bare, then route (see inRounds). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const CONNECTIONS = 100;
const WARM_UP_SECONDS = 2;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const AUTOCANNON = path.resolve('node_modules/.bin/autocannon');
const TARGETS = { trustRatio: 0.5, trustP99Ms: 25, agentQueryRatio: 0.3, reportsPerS: 10_000 };

const run = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// The baseline process: `--bare-server` turns this script into a minimal Fastify app.

async function serveBare(): Promise<void> {
  const app = Fastify({ bodyLimit: 64 * 1024 });
  app.get('/hello', async () => ({ hello: 'world' }));
  app.post('/echo', async (request, reply) => reply.status(202).send({ recorded: true, echo: request.body }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`bare fastify listening on ${url}\n`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------
// Processes.

interface Served {
  child: ChildProcess;
  url: string;
  /** CPU seconds the process has used so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/**
 * CPU of the backends connected to one database. The pool keeps its connections, so a backend
 * that appears between two readings counts from zero (its start-up is a few ms at most).
 */
function dbCpuReader(db: Database, name: string): DbCpu {
  const seen = new Map<number, number>();
  let total = 0;
  return async () => {
    const rows = await db.sql<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`;
    for (const { pid } of rows) {
      // 0: ended meanwhile (or no CPU used yet): either way nothing to add
      const now = cpuSeconds(pid);
      if (now === 0) continue;
      total += now - (seen.get(pid) ?? 0);
      seen.set(pid, now);
    }
    return total;
  };
}

async function startProcess(args: string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
  });
  return {
    child,
    url,
    cpuSeconds() {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${args.at(-1)} exited (${child.exitCode ?? child.signalCode}) during the bench`);
      }
      return cpuSeconds(child.pid!);
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load.

/** CPU seconds used so far by the Postgres backends of one database (distributed mode). */
type DbCpu = () => Promise<number>;

interface Row {
  name: string;
  /** Time under load, summed over the row's segments. */
  seconds: number;
  requests_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  requests: number;
  responses_2xx: number;
  non_2xx: number;
  errors: number;
  /** CPU of the serving process per answered request (robust to other load on the machine). */
  server_cpu_us_per_request: number;
  /** CPU of the Postgres backends of the bench database per answered request (null: not measured). */
  db_cpu_us_per_request: number | null;
  /** CPU of the load generator (autocannon) per answered request: it shares the machine. */
  load_cpu_us_per_request: number;
  /**
   * Requests per second this machine's cores could answer if the server, its database and the
   * load generator used all of them at the CPU per request measured here: where the route would
   * saturate the machine, to set beside what was reached (a route far below it is waiting on
   * something other than CPU).
   */
  cpu_bound_requests_per_s: number;
  ratio_to_bare: number | null;
  ratio_to_bare_cpu: number | null;
  /** The ratio to bare in each round (bare and this route measured back to back). */
  ratio_to_bare_by_round?: number[];
  /** CPU seconds, summed: what the per-request figures are computed from. */
  cpu_s: { server: number; db: number | null; load: number };
}

interface Request {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** A fixed number of requests instead of a duration: every one of them is answered. */
  amount?: number;
  /** Duration when no amount is given (default BENCH_SECONDS). */
  seconds?: number;
  dbCpu?: DbCpu | undefined;
}

async function load(name: string, server: Served, pathAndQuery: string, request: Request = {}): Promise<Row> {
  const args = ['-c', String(CONNECTIONS), '--json', '-m', request.method ?? 'GET'];
  args.push(
    // autocannon notices a fixed amount is done at its next sample: every 100 ms, not every second
    ...(request.amount
      ? ['-a', String(request.amount), '-L', '100']
      : ['-d', String(request.seconds ?? SECONDS)]),
  );
  for (const [k, v] of Object.entries(request.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (request.body) args.push('-b', request.body);
  args.push(`${server.url}${pathAndQuery}`);
  const cpuBefore = server.cpuSeconds();
  const dbBefore = await request.dbCpu?.();
  const loadBefore = reapedChildrenCpuSeconds();
  const { stdout } = await run(AUTOCANNON, args, { maxBuffer: 64 * 1024 * 1024 });
  // what autocannon spends starting and stopping is not per request: left out (see main)
  const loadCpu = Math.max(0, reapedChildrenCpuSeconds() - loadBefore - loadStartupCpuSeconds);
  const cpu = server.cpuSeconds() - cpuBefore;
  const dbCpu = dbBefore === undefined ? null : (await request.dbCpu!()) - dbBefore;
  const r = JSON.parse(stdout);
  const row = rowOf(name, {
    seconds: r.duration,
    requests: r.requests.total,
    responses_2xx: r['2xx'],
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    p50: [r.latency.p50],
    p99: [r.latency.p99],
    cpu_s: { server: cpu, db: dbCpu, load: loadCpu },
  });
  if (name !== 'warm-up') {
    console.log(
      `  ${name}: ${row.requests_per_s} req/s, p99 ${row.latency_p99_ms} ms, non-2xx ${row.non_2xx}`,
    );
  }
  return row;
}

interface Totals {
  seconds: number;
  requests: number;
  responses_2xx: number;
  non_2xx: number;
  errors: number;
  /** Each segment's percentiles. */
  p50: number[];
  p99: number[];
  cpu_s: Row['cpu_s'];
}

function rowOf(name: string, t: Totals): Row {
  const perRequest = (s: number) => Math.round((s * 1e6) / Math.max(1, t.requests));
  return {
    name,
    seconds: round(t.seconds, 2),
    requests_per_s: Math.round(t.requests / Math.max(1e-9, t.seconds)),
    // segments' p50s by their median; the worst segment's p99 (a target is met in every segment)
    latency_p50_ms: median(t.p50),
    latency_p99_ms: Math.max(...t.p99),
    requests: t.requests,
    responses_2xx: t.responses_2xx,
    non_2xx: t.non_2xx,
    errors: t.errors,
    server_cpu_us_per_request: perRequest(t.cpu_s.server),
    db_cpu_us_per_request: t.cpu_s.db === null ? null : perRequest(t.cpu_s.db),
    load_cpu_us_per_request: perRequest(t.cpu_s.load),
    cpu_bound_requests_per_s: Math.round(
      (os.cpus().length * t.requests) / Math.max(1e-9, t.cpu_s.server + (t.cpu_s.db ?? 0) + t.cpu_s.load),
    ),
    ratio_to_bare: null,
    ratio_to_bare_cpu: null,
    cpu_s: t.cpu_s,
  };
}

/** One row from the segments of a route measured in several rounds. */
function mergeRows(name: string, segments: Row[]): Row {
  const sum = (f: (r: Row) => number) => segments.reduce((a, r) => a + f(r), 0);
  const db = segments.every((r) => r.cpu_s.db !== null) ? sum((r) => r.cpu_s.db!) : null;
  return rowOf(name, {
    seconds: sum((r) => r.seconds),
    requests: sum((r) => r.requests),
    responses_2xx: sum((r) => r.responses_2xx),
    non_2xx: sum((r) => r.non_2xx),
    errors: sum((r) => r.errors),
    p50: segments.map((r) => r.latency_p50_ms),
    p99: segments.map((r) => r.latency_p99_ms),
    cpu_s: { server: sum((r) => r.cpu_s.server), db, load: sum((r) => r.cpu_s.load) },
  });
}

interface Measured {
  name: string;
  server: Served;
  path: string;
  request?: Request;
  /** Records this route's targets once its rounds are merged. */
  check?: (row: Row) => void;
}

/**
 * Bare Fastify and the routes compared with it, measured in ROUNDS rounds, each one segment of
 * bare followed by one of each route (a fixed `amount` is split over the rounds). This machine's
 * speed drifts by up to 2x within minutes (it is a shared VM), so a route is compared with the
 * bare segment measured just before it, round by round, and its ratio is the median of those.
 */
async function inRounds(bare: Measured, routes: Measured[]): Promise<{ bare: Row; routes: Row[] }> {
  const segment = (m: Measured): Request => {
    const r = m.request ?? {};
    return r.amount
      ? { ...r, amount: Math.ceil(r.amount / ROUNDS) }
      : { ...r, seconds: Math.max(1, Math.round((r.seconds ?? SECONDS) / ROUNDS)) };
  };
  const bareSegments: Row[] = [];
  const routeSegments: Row[][] = routes.map(() => []);
  for (let round = 1; round <= ROUNDS; round++) {
    bareSegments.push(await load(`${bare.name} (round ${round})`, bare.server, bare.path, segment(bare)));
    for (const [i, m] of routes.entries()) {
      routeSegments[i]!.push(await load(`${m.name} (round ${round})`, m.server, m.path, segment(m)));
    }
  }
  const bareRow = mergeRows(bare.name, bareSegments);
  return {
    bare: bareRow,
    routes: routes.map((m, i) => {
      const byRound = routeSegments[i]!.map((r, k) =>
        round(r.requests_per_s / bareSegments[k]!.requests_per_s, 3),
      );
      const merged = mergeRows(m.name, routeSegments[i]!);
      const row = {
        ...merged,
        ratio_to_bare: median(byRound),
        ratio_to_bare_by_round: byRound,
        ratio_to_bare_cpu: round(
          bareRow.server_cpu_us_per_request / Math.max(1, merged.server_cpu_us_per_request),
          3,
        ),
      };
      m.check?.(row);
      return row;
    }),
  };
}

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------
// Data: a tracked server with real probes (a testkit MCP server), and a key with room to spare.

interface Seeded {
  serverUrl: string;
  serverId: number;
  apiKey: string;
}

async function seed(db: Database): Promise<Seeded> {
  const repos = createRepositories(db.sql);
  const fleet = await startFleet();
  try {
    const serverUrl = normalizeServerUrl(fleet.add('healthy').url);
    const { server } = await repos.servers.upsert({
      url: serverUrl,
      name: 'Bench Weather',
      category: 'weather',
      source: 'registered',
    });
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const records = [];
    for (let i = 0; i < 12; i++) {
      const slot = new Date(minute - i * 60_000);
      const result = await probe(serverUrl, { allowPrivateNetworks: true, timeoutMs: 5_000 });
      records.push({
        probe_id: jobIds.probe(server.id, slot),
        server_id: server.id,
        scheduled_at: slot,
        result,
      });
    }
    await repos.probeResults.insertBatch(records, { intervalSeconds: 300 });
    await analyzeDirty(db.sql);
    const key = generateApiKey();
    await repos.apiKeys.insert({
      prefix: key.displayPrefix,
      secretSha256: key.sha256,
      scopes: ['trust:read'],
      trialLimit: 1_000_000,
      createdIpHash: null,
    });
    return { serverUrl, serverId: server.id, apiKey: key.key };
  } finally {
    await fleet.close();
  }
}

async function reportRows(db: Database, serverId: number): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM interaction_reports WHERE server_id = ${serverId}`;
  return row!.n;
}

/** The environment of an observatory process: nothing inherited that could change its mode. */
function observatoryEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...inherited } = process.env;
  return {
    ...inherited,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    // the seeded server lives on 127.0.0.1; no probe runs in an api-only process
    PROBE_ALLOW_PRIVATE_NETWORKS: 'true',
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// One storage mode, start to finish.

interface ModeResult {
  mode: string;
  rows: Row[];
  reports: { acknowledged: number; stored: number; lost: number };
  targets: Record<string, { value: number; target: string; met: boolean }>;
}

async function benchMode(mode: 'distributed' | 'embedded', bare: Served): Promise<ModeResult> {
  // The database is prepared (and, for embedded mode, read back) from here; PGlite takes one
  // session, so the embedded data dir is closed while the observatory process holds it.
  let db: Database;
  let env: NodeJS.ProcessEnv;
  let cleanUp: () => Promise<void>;
  let reopen: () => Promise<Database>;
  let dbCpu: DbCpu | undefined;
  if (mode === 'distributed') {
    const testDb = await createTestDatabase();
    const prefix = `bench-api-${randomBytes(4).toString('hex')}`;
    db = testDb;
    env = observatoryEnv({ DATABASE_URL: testDb.url, REDIS_URL, QUEUE_PREFIX: prefix });
    reopen = async () => testDb;
    dbCpu = dbCpuReader(testDb, new URL(testDb.url).pathname.slice(1));
    cleanUp = async () => {
      await testDb.drop();
      await deleteQueueKeys(REDIS_URL, prefix).catch(() => 0);
    };
  } else {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-api-'));
    db = await openDatabase({ dataDir });
    await migrate(db.sql);
    env = observatoryEnv({ DATA_DIR: dataDir });
    reopen = () => openDatabase({ dataDir });
    cleanUp = async () => rmSync(dataDir, { recursive: true, force: true });
  }

  const seeded = await seed(db);
  if (mode === 'embedded') await db.close();
  // per bench process, so two benches on one machine do not mix their profiles
  const profileDir = path.resolve('bench-results/profiles', `${mode}-${process.pid}`);
  const observatory = await startProcess(
    [
      ...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      '--import',
      'tsx',
      'apps/cli/src/main.ts',
      'api',
    ],
    env,
  );
  try {
    const trustPath = `/api/trust?url=${encodeURIComponent(seeded.serverUrl)}`;
    const queryPath = `/agent-query/${encodeURIComponent(seeded.serverUrl)}`;
    const auth = { authorization: `Bearer ${seeded.apiKey}` };
    const json = { 'content-type': 'application/json' };
    const reportBody = JSON.stringify({
      server_url: seeded.serverUrl,
      success: true,
      latency_ms: 120,
      tool_name: 'forecast',
      agent_id: 'bench-agent',
    });

    // Every answer must be the real one before its speed means anything.
    const check = await fetch(`${observatory.url}${queryPath}`, { headers: auth });
    const verdict = (await check.json()) as { verdict?: string; receipt_id?: string };
    if (check.status !== 200 || !verdict.receipt_id) throw new Error(`agent-query answered ${check.status}`);
    const trust = (await (await fetch(`${observatory.url}${trustPath}`)).json()) as { found?: boolean };
    if (!trust.found) throw new Error('the seeded server is not tracked');

    const warm = (s: Served, p: string, r: Request = {}) =>
      load('warm-up', s, p, { ...r, seconds: WARM_UP_SECONDS });

    console.log(`\n${mode}: ${SECONDS} s per measurement in ${ROUNDS} rounds, ${CONNECTIONS} connections`);
    const rows: Row[] = [];
    const targets: ModeResult['targets'] = {};
    const target = (name: string, value: number, text: string, met: boolean) => {
      targets[name] = { value, target: text, met };
    };
    const atLeast = (name: string, value: number, min: number) =>
      target(name, value, `≥ ${min}`, value >= min);
    const atMost = (name: string, value: number, max: number) =>
      target(name, value, `≤ ${max}`, value <= max);
    /** Non-2xx answers plus connection errors: the row's answers must all be real ones. */
    const all2xx = (name: string, row: Row) =>
      target(name, row.non_2xx + row.errors, '= 0', row.non_2xx + row.errors === 0);
    if (ROWS.has('trust') || ROWS.has('agent-query')) {
      await warm(bare, '/hello');
      const routes: Measured[] = [];
      if (ROWS.has('trust')) {
        await warm(observatory, trustPath);
        routes.push({
          name: 'GET /api/trust',
          server: observatory,
          path: trustPath,
          request: { dbCpu },
          check: (row) => {
            atLeast('trust_ratio', row.ratio_to_bare!, TARGETS.trustRatio);
            atMost('trust_p99_ms', row.latency_p99_ms, TARGETS.trustP99Ms);
            all2xx('trust_all_2xx', row);
          },
        });
      }
      if (ROWS.has('agent-query')) {
        await warm(observatory, queryPath, { headers: auth });
        routes.push({
          name: 'GET /agent-query (signed)',
          server: observatory,
          path: queryPath,
          request: { headers: auth, dbCpu },
          check: (row) => {
            atLeast('agent_query_ratio', row.ratio_to_bare!, TARGETS.agentQueryRatio);
            all2xx('agent_query_all_2xx', row);
          },
        });
      }
      const measured = await inRounds(
        { name: 'bare fastify GET /hello', server: bare, path: '/hello' },
        routes,
      );
      rows.push(measured.bare, ...measured.routes);
    }

    let reports: ModeResult['reports'] = { acknowledged: 0, stored: 0, lost: 0 };
    if (ROWS.has('report')) {
      const post = { method: 'POST', headers: json, body: reportBody };
      await warm(bare, '/echo', post);
      // Fixed amounts (the first one sized for about 2 s, and a warm-up), so every request sent is
      // answered and the count of 2xx answers is exact.
      const calibration = await load('warm-up', observatory, '/api/report', { ...post, amount: 20_000 });
      const amount = Math.max(20_000, Math.round(calibration.requests_per_s * SECONDS));
      const measured = await inRounds(
        { name: 'bare fastify POST /echo', server: bare, path: '/echo', request: post },
        [
          {
            name: 'POST /api/report',
            server: observatory,
            path: '/api/report',
            request: { ...post, amount, dbCpu },
          },
        ],
      );
      const reportRow = measured.routes[0]!;
      rows.push(measured.bare, reportRow);

      // Zero loss: every 2xx answered is a row, counted straight from the database once the
      // observatory has stopped (a graceful stop drains nothing here: acknowledged means stored).
      await observatory.stop();
      const readBack = await reopen();
      const stored = await reportRows(readBack, seeded.serverId).finally(() =>
        readBack === db ? undefined : readBack.close(),
      );
      const acknowledged = calibration.responses_2xx + reportRow.responses_2xx;
      reports = { acknowledged, stored, lost: acknowledged - stored };
      atLeast('reports_per_s', reportRow.requests_per_s, TARGETS.reportsPerS);
      target(
        'reports_lost',
        acknowledged - stored,
        '= 0 (and no non-2xx)',
        acknowledged === stored && reportRow.non_2xx + calibration.non_2xx === 0,
      );
    }
    return { mode, rows, reports, targets };
  } finally {
    await observatory.stop();
    await cleanUp();
  }
}

// ---------------------------------------------------------------------------------------------
// Output.

function printTable(result: ModeResult) {
  const header = [
    'route',
    'req/s',
    'p50 ms',
    'p99 ms',
    'ratio',
    'cpu µs/req',
    'cpu ratio',
    'db cpu µs/req',
    'load cpu µs/req',
    'cpu-bound req/s',
    'non-2xx',
  ];
  const lines = result.rows.map((r) => [
    r.name,
    String(r.requests_per_s),
    String(r.latency_p50_ms),
    String(r.latency_p99_ms),
    r.ratio_to_bare === null ? '—' : `${Math.round(r.ratio_to_bare * 100)} %`,
    String(r.server_cpu_us_per_request),
    r.ratio_to_bare_cpu === null ? '—' : `${Math.round(r.ratio_to_bare_cpu * 100)} %`,
    r.db_cpu_us_per_request === null ? '—' : String(r.db_cpu_us_per_request),
    String(r.load_cpu_us_per_request),
    String(r.cpu_bound_requests_per_s),
    String(r.non_2xx + r.errors),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${result.mode}`);
  console.log(fmt(header));
  for (const l of lines) console.log(fmt(l));
  console.log(
    `reports: ${result.reports.acknowledged} acknowledged, ${result.reports.stored} stored, ${result.reports.lost} lost`,
  );
  for (const [name, t] of Object.entries(result.targets)) {
    console.log(`  ${t.met ? 'met   ' : 'MISSED'} ${name} = ${t.value} (target ${t.target})`);
  }
}

/**
 * CPU an autocannon run takes whatever its load (starting node, loading modules, exiting): about
 * 0.4 s here, which would add ~25 µs per request to a 3-second segment's load cpu. Measured as
 * the median of runs that send one request each.
 */
let loadStartupCpuSeconds = 0;

async function measureLoadStartup(server: Served): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const before = reapedChildrenCpuSeconds();
    await run(AUTOCANNON, ['-c', '1', '-a', '1', '--json', `${server.url}/hello`]);
    runs.push(reapedChildrenCpuSeconds() - before);
  }
  return median(runs);
}

async function main() {
  const bare = await startProcess(
    ['--import', 'tsx', path.resolve('scripts/bench-api.ts'), '--bare-server'],
    process.env,
  );
  loadStartupCpuSeconds = await measureLoadStartup(bare);
  console.log(
    `autocannon start-up and exit: ${(loadStartupCpuSeconds * 1000).toFixed(0)} ms CPU a run (left out of load cpu)`,
  );
  const results: Array<ModeResult | { mode: string; error: string }> = [];
  try {
    for (const mode of MODES) {
      // A mode whose observatory falls over is a result too: recorded, and the next mode runs.
      try {
        const result = await benchMode(mode, bare);
        printTable(result);
        results.push(result);
      } catch (err) {
        console.log(`\n${mode}: FAILED — ${(err as Error).message}`);
        results.push({ mode, error: (err as Error).message });
      }
    }
  } finally {
    await bare.stop();
  }
  await mkdir('bench-results', { recursive: true });
  await writeFile(
    'bench-results/api.json',
    `${JSON.stringify(
      {
        generated_at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? 'unknown', node: process.version },
        seconds: SECONDS,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        load_startup_cpu_s: loadStartupCpuSeconds,
        targets: TARGETS,
        modes: results,
      },
      null,
      2,
    )}\n`,
  );
  console.log('\nwrote bench-results/api.json');
  if (results.some((r) => 'error' in r || Object.values(r.targets).some((t) => !t.met))) process.exitCode = 1;
}

if (process.argv.includes('--bare-server')) await serveBare();
else await main();
