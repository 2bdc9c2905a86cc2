/**
 * npm run bench:probe — the prober's cost per full MCP probe, against the SDK Client doing the
 * same handshake in the same run.
 *
 * A testkit fleet (healthy servers, lean JSON responder) runs in a CHILD process so its CPU is not
 * charged to the prober; process.cpuUsage() here is the prober's alone (the fleet reports its own
 * CPU separately). Every probe opens a fresh connection, for both clients: ours by design, the SDK
 * Client through a per-probe undici Agent handed to its transport as `fetch`. Handshake for both:
 * initialize, notifications/initialized, ping, tools/list, close.
 *
 * Then 1,000 probes are held in flight against `hangs` servers to measure the prober's RSS.
 * Writes bench-results/probe.json. Env: BENCH_PROBES (per run, default 2000).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { probe } from '@observatory/probe';
import { Agent, fetch as undiciFetch } from 'undici';

const PROBES = Number(process.env.BENCH_PROBES ?? 2000);
const CONCURRENCIES = [50, 500];
const IN_FLIGHT = 1000;
const TARGET_CPU_MS = 0.8;
const TARGET_RATIO = 4;

interface FleetInfo {
  servers: Array<{ url: string; behaviour: string }>;
  statsUrl: string;
}

interface FleetStats {
  requests: number;
  cpu_user_us: number;
  cpu_system_us: number;
  rss_bytes: number;
}

async function startFleetProcess(): Promise<{ child: ChildProcess; info: FleetInfo }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/testkit/src/cli.ts', '--json', 'healthy=200', `hangs=${IN_FLIGHT / 10}`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fleet exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  return { child, info: JSON.parse(line) as FleetInfo };
}

async function fleetStats(statsUrl: string): Promise<FleetStats> {
  const res = await undiciFetch(statsUrl);
  return (await res.json()) as FleetStats;
}

type ProbeFn = (url: string) => Promise<boolean>;

const observatoryProbe: ProbeFn = async (url) =>
  (await probe(url, { allowPrivateNetworks: true })).outcome === 'up';

const sdkClientProbe: ProbeFn = async (url) => {
  const agent = new Agent();
  const fetchWithAgent = ((input: string | URL, init?: RequestInit) =>
    undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as FetchLike;
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithAgent });
  const client = new Client({ name: 'bench-sdk-client', version: '1.0.0' });
  try {
    await client.connect(transport);
    await client.ping();
    const { tools } = await client.listTools();
    return tools.length > 0;
  } catch {
    return false;
  } finally {
    await client.close();
    await agent.destroy();
  }
};

interface RunResult {
  client: string;
  concurrency: number;
  probes: number;
  ok: number;
  wall_s: number;
  probes_per_s: number;
  cpu_ms_per_probe: number;
  fleet_cpu_ms_per_probe: number;
}

async function run(
  name: string,
  fn: ProbeFn,
  urls: string[],
  concurrency: number,
  count: number,
  statsUrl: string,
) {
  let next = 0;
  let ok = 0;
  const fleetBefore = await fleetStats(statsUrl);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const url = urls[next++ % urls.length]!;
        if (await fn(url)) ok++;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const fleetAfter = await fleetStats(statsUrl);
  const fleetCpuUs =
    fleetAfter.cpu_user_us - fleetBefore.cpu_user_us + (fleetAfter.cpu_system_us - fleetBefore.cpu_system_us);
  return {
    client: name,
    concurrency,
    probes: count,
    ok,
    wall_s: round(wall, 2),
    probes_per_s: Math.round(count / wall),
    cpu_ms_per_probe: round((cpu.user + cpu.system) / 1000 / count, 3),
    fleet_cpu_ms_per_probe: round(fleetCpuUs / 1000 / count, 3),
  } satisfies RunResult;
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/**
 * The prober's RSS with IN_FLIGHT probes waiting on servers that never answer. Runs in its own
 * child process (this script with BENCH_IN_FLIGHT set), so the throughput runs' heap is not in it.
 */
async function inFlightChild(job: { healthy: string[]; hangs: string[]; statsUrl: string }) {
  for (let i = 0; i < 50; i++) await observatoryProbe(job.healthy[i % job.healthy.length]!);
  const rssBefore = process.memoryUsage.rss();
  const heapBefore = process.memoryUsage().heapUsed;
  const requestsBefore = (await fleetStats(job.statsUrl)).requests;
  const all = Array.from({ length: IN_FLIGHT }, (_, i) =>
    probe(job.hangs[i % job.hangs.length]!, { allowPrivateNetworks: true, timeoutMs: 8_000 }),
  );
  // Sample once every probe's initialize has reached the fleet, i.e. all are truly in flight.
  const waitStarted = performance.now();
  let inFlight = 0;
  while (inFlight < IN_FLIGHT && performance.now() - waitStarted < 6_000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    inFlight = (await fleetStats(job.statsUrl)).requests - requestsBefore;
  }
  const rssPeak = process.memoryUsage.rss();
  const heapPeak = process.memoryUsage().heapUsed;
  const results = await Promise.all(all);
  return {
    probes_in_flight: inFlight,
    rss_before_mib: round(rssBefore / 2 ** 20, 1),
    rss_in_flight_mib: round(rssPeak / 2 ** 20, 1),
    rss_delta_mib: round((rssPeak - rssBefore) / 2 ** 20, 1),
    heap_delta_mib: round((heapPeak - heapBefore) / 2 ** 20, 1),
    kib_per_probe_in_flight: round((rssPeak - rssBefore) / 1024 / IN_FLIGHT, 1),
    ended_as_timeout: results.filter((r) => r.outcome === 'down' && r.error_type === 'timeout').length,
  };
}

async function rssInFlight(job: { healthy: string[]; hangs: string[]; statsUrl: string }) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench-probe.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_IN_FLIGHT: JSON.stringify(job) },
  });
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: child.stdout! }).once('line', resolve),
  );
  return JSON.parse(line) as Awaited<ReturnType<typeof inFlightChild>>;
}

if (process.env.BENCH_IN_FLIGHT) {
  const result = await inFlightChild(JSON.parse(process.env.BENCH_IN_FLIGHT));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const { child, info } = await startFleetProcess();
process.once('exit', () => child.kill('SIGTERM'));
try {
  const healthy = info.servers.filter((s) => s.behaviour === 'healthy').map((s) => s.url);
  const hangs = info.servers.filter((s) => s.behaviour === 'hangs').map((s) => s.url);

  // Warm-up: JIT, module loading, the fleet's own first requests.
  await run('warm-up', observatoryProbe, healthy, 50, 300, info.statsUrl);
  await run('warm-up', sdkClientProbe, healthy, 50, 300, info.statsUrl);

  const runs: RunResult[] = [];
  for (const concurrency of CONCURRENCIES) {
    runs.push(await run('observatory probe', observatoryProbe, healthy, concurrency, PROBES, info.statsUrl));
    runs.push(await run('SDK Client', sdkClientProbe, healthy, concurrency, PROBES, info.statsUrl));
  }
  const ratios = CONCURRENCIES.map((concurrency) => {
    const ours = runs.find((r) => r.client === 'observatory probe' && r.concurrency === concurrency)!;
    const sdk = runs.find((r) => r.client === 'SDK Client' && r.concurrency === concurrency)!;
    return {
      concurrency,
      cpu_sdk_over_ours: round(sdk.cpu_ms_per_probe / ours.cpu_ms_per_probe, 2),
      throughput_ours_over_sdk: round(ours.probes_per_s / sdk.probes_per_s, 2),
    };
  });
  const rss = await rssInFlight({ healthy, hangs, statsUrl: info.statsUrl });

  const header = ['client', 'conc', 'probes', 'ok', 'probes/s', 'CPU ms/probe', 'fleet CPU ms/probe'];
  const rows = runs.map((r) => [
    r.client,
    String(r.concurrency),
    String(r.probes),
    String(r.ok),
    String(r.probes_per_s),
    r.cpu_ms_per_probe.toFixed(3),
    r.fleet_cpu_ms_per_probe.toFixed(3),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\nprobe bench — full handshake, fresh connection per probe, ${PROBES} probes per run\n`);
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log('');
  for (const r of ratios) {
    console.log(
      `concurrency ${r.concurrency}: SDK Client uses ${r.cpu_sdk_over_ours}x our CPU per probe; our throughput is ${r.throughput_ours_over_sdk}x`,
    );
  }
  console.log(
    `RSS with ${rss.probes_in_flight} probes in flight (hangs servers): ${rss.rss_before_mib} → ${rss.rss_in_flight_mib} MiB ` +
      `(+${rss.rss_delta_mib} MiB, ${rss.kib_per_probe_in_flight} KiB/probe, heap +${rss.heap_delta_mib} MiB); ` +
      `${rss.ended_as_timeout} ended as timeout`,
  );
  const ours = runs.filter((r) => r.client === 'observatory probe');
  const targets = {
    cpu_ms_per_probe_max: TARGET_CPU_MS,
    cpu_target_met: ours.every((r) => r.cpu_ms_per_probe <= TARGET_CPU_MS),
    sdk_ratio_min: TARGET_RATIO,
    ratio_target_met: ratios.every((r) => r.cpu_sdk_over_ours >= TARGET_RATIO),
  };
  console.log(
    `targets: ≤ ${TARGET_CPU_MS} ms CPU/probe ${targets.cpu_target_met ? 'met' : 'MISSED'}; ≥ ${TARGET_RATIO}x less than SDK ${targets.ratio_target_met ? 'met' : 'MISSED'}`,
  );
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(
    'bench-results/probe.json',
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, probes_per_run: PROBES, runs, ratios, rss_in_flight: rss, targets }, null, 2)}\n`,
  );
  console.log('wrote bench-results/probe.json');
} finally {
  child.kill('SIGTERM');
}
