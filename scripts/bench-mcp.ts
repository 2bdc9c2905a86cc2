/**
 * npm run bench:mcp
 *
 * check_trust through /mcp beside its REST twin GET /api/trust, for the same tracked server, in
 * the same run, against the same API process (buildApp on a fresh test database, dropped at the
 * end). Load comes from autocannon in a separate process (so it does not share the server's
 * event loop) over keep-alive connections; each MCP request is a complete stateless exchange,
 * a JSON-RPC tools/call POST answered with JSON — what an agent's SDK client sends.
 *
 * Runs, REST and MCP alternated twice so drift on a shared machine hits both:
 * - REST  GET /api/trust?url=…                        (the baseline)
 * - MCP   POST /mcp tools/call check_trust            (as served: shared McpServer, ExchangeTransport)
 * then once each
 * - MCP   the same call with no answer memo: every call through the shared McpServer
 *         (/mcp with answerMemo: false, on a bare Fastify: no input guard, metrics or logger)
 * - MCP   the same call through the SDK's web transport and a fresh McpServer per request
 *         (/mcp with sharedServerForPlainRequests: false — the path initialize and edge cases take)
 * - MCP   POST /mcp tools/list                         (prepared listing, no database)
 * and, in-process, the cost of building an McpServer with its ten tools.
 *
 * Two ratios against REST: wall-clock requests/s, and requests per CPU-second of the API process
 * (process.cpuUsage over the run / requests answered), which holds steadier when other work
 * shares the machine. Target: MCP check_trust ≥ 50 % of REST.
 * Writes bench-results/mcp.json. Env: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (default 10).
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '@observatory/api-app';
import { createServices } from '@observatory/service';
import { createTestRuntime } from '@observatory/service/testing';
import Fastify from 'fastify';
import { mcpRoutes } from '../apps/api/src/mcp/mcp.routes.ts';
import { createMcpServer, createToolRegistry } from '../apps/api/src/mcp/mcp-server.ts';
import { MCP_TOOL_DEFINITIONS } from '../apps/api/src/mcp/tools/index.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TARGET_RATIO = 0.5;
const SERVER_URL = 'http://127.0.0.1:9/bench-mcp';
const AUTOCANNON = path.resolve('node_modules/.bin/autocannon');

const run = promisify(execFile);

interface LoadResult {
  name: string;
  requests_per_s: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
  /** CPU of this (the API) process per answered request: robust to other load on the machine. */
  server_cpu_us_per_request: number;
  /** Requests per CPU-second of the API process: its capacity on one core. */
  requests_per_cpu_s: number;
}

interface LoadRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One autocannon run in its own process; its --json summary and this process's CPU meanwhile. */
async function load(name: string, url: string, request: LoadRequest = {}): Promise<LoadResult> {
  const args = ['-c', String(CONNECTIONS), '-d', String(SECONDS), '--json', '-m', request.method ?? 'GET'];
  for (const [k, v] of Object.entries(request.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (request.body) args.push('-b', request.body);
  args.push(url);
  const cpu0 = process.cpuUsage();
  const { stdout } = await run(AUTOCANNON, args, { maxBuffer: 16 * 1024 * 1024 });
  const cpu = process.cpuUsage(cpu0);
  const r = JSON.parse(stdout);
  const cpuUs = (cpu.user + cpu.system) / r.requests.total;
  return {
    name,
    requests_per_s: Math.round(r.requests.average),
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    requests: r.requests.total,
    non_2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    server_cpu_us_per_request: Math.round(cpuUs),
    requests_per_cpu_s: Math.round(1e6 / cpuUs),
  };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

const runtime = await createTestRuntime();
const services = await createServices(runtime);
const app = await buildApp(runtime, { logRequests: false, services });
// The SDK-transport-only variant of /mcp, on the same services.
const sdkOnly = Fastify({ bodyLimit: 64 * 1024 });
await mcpRoutes(sdkOnly, services, { sharedServerForPlainRequests: false });
// The served path without the memo of shared answers: what a call costs when it is not a repeat.
const noMemo = Fastify({ bodyLimit: 64 * 1024 });
await mcpRoutes(noMemo, services, { answerMemo: false });
try {
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const sdkBase = await sdkOnly.listen({ host: '127.0.0.1', port: 0 });
  const noMemoBase = await noMemo.listen({ host: '127.0.0.1', port: 0 });
  // A tracked server, so both paths do the full lookup and evaluation (not the found:false shortcut).
  await services.reports.ingest({ server_url: SERVER_URL, success: true, latency_ms: 120 }, {});

  const restUrl = `${base}/api/trust?url=${encodeURIComponent(SERVER_URL)}`;
  const mcpCall: LoadRequest = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'check_trust', arguments: { server_url: SERVER_URL } },
    }),
  };

  // The answers must be the same body before their speed means anything.
  type Body = Record<string, unknown>;
  const restBody = (await (await fetch(restUrl)).json()) as Body;
  for (const mcpBase of [base, sdkBase, noMemoBase]) {
    const answer = (await (await fetch(`${mcpBase}/mcp`, mcpCall as RequestInit)).json()) as {
      result: { structuredContent: Body };
    };
    const same = (b: Body) => JSON.stringify({ ...b, checked_at: null });
    if (same(restBody) !== same(answer.result.structuredContent))
      throw new Error('REST and MCP answers differ');
  }

  console.log(`warming up, then ${SECONDS} s per run, ${CONNECTIONS} keep-alive connections…`);
  await load('warm-up', restUrl);
  await load('warm-up', `${base}/mcp`, mcpCall);

  const restRuns: LoadResult[] = [];
  const mcpRuns: LoadResult[] = [];
  for (let round = 0; round < 2; round++) {
    restRuns.push(await load('REST GET /api/trust', restUrl));
    mcpRuns.push(await load('MCP check_trust (as served)', `${base}/mcp`, mcpCall));
  }
  await load('warm-up', `${noMemoBase}/mcp`, mcpCall);
  const noMemoRun = await load('MCP check_trust (no answer memo)', `${noMemoBase}/mcp`, mcpCall);
  await load('warm-up', `${sdkBase}/mcp`, mcpCall);
  const sdkRun = await load('MCP check_trust (SDK transport, server per request)', `${sdkBase}/mcp`, mcpCall);
  const listRun = await load('MCP tools/list (as served)', `${base}/mcp`, {
    ...mcpCall,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

  // What a fresh server costs a request on the SDK path, before any I/O.
  const registry = createToolRegistry(MCP_TOOL_DEFINITIONS);
  const context = () => ({ services, log: app.log });
  for (let i = 0; i < 2_000; i++) createMcpServer(registry, context);
  const builds = 20_000;
  const t0 = performance.now();
  for (let i = 0; i < builds; i++) createMcpServer(registry, context);
  const buildUs = ((performance.now() - t0) * 1000) / builds;

  const restRate = mean(restRuns.map((r) => r.requests_per_s));
  const mcpRate = mean(mcpRuns.map((r) => r.requests_per_s));
  const restCpuRate = mean(restRuns.map((r) => r.requests_per_cpu_s));
  const mcpCpuRate = mean(mcpRuns.map((r) => r.requests_per_cpu_s));
  const ratio = mcpRate / restRate;
  const cpuRatio = mcpCpuRate / restCpuRate;
  const rows = [...restRuns, ...mcpRuns, noMemoRun, sdkRun, listRun];
  console.log('');
  console.table(
    rows.map((r) => ({
      run: r.name,
      'req/s': r.requests_per_s,
      'p50 ms': r.latency_p50_ms,
      'p99 ms': r.latency_p99_ms,
      'API CPU µs/req': r.server_cpu_us_per_request,
      'req/CPU-s': r.requests_per_cpu_s,
      'vs REST (CPU)': pct(r.requests_per_cpu_s / restCpuRate),
      'non-2xx': r.non_2xx,
      errors: r.errors,
    })),
  );
  console.log(
    `McpServer with ${MCP_TOOL_DEFINITIONS.length} tools, built in-process: ${buildUs.toFixed(1)} µs`,
  );
  console.log(
    `check_trust MCP/REST: ${pct(ratio)} by wall-clock req/s (${Math.round(mcpRate)} vs ${Math.round(restRate)}), ` +
      `${pct(cpuRatio)} by requests per API CPU-second (${Math.round(mcpCpuRate)} vs ${Math.round(restCpuRate)}); ` +
      `target ≥ ${pct(TARGET_RATIO)}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'} (wall), ${cpuRatio >= TARGET_RATIO ? 'met' : 'NOT met'} (CPU)`,
  );
  const load1 = os.loadavg()[0] ?? 0;
  if (load1 > os.cpus().length) {
    console.log(
      `note: load average ${load1.toFixed(1)} on ${os.cpus().length} CPUs — wall-clock rates are noisy; the CPU ratio is the steadier one`,
    );
  }
  if (rows.some((r) => r.non_2xx > 0 || r.errors > 0)) console.log('WARNING: some requests failed');

  await mkdir('bench-results', { recursive: true });
  await writeFile(
    'bench-results/mcp.json',
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cpus: os.cpus().length,
        load_average_1m: Math.round(load1 * 10) / 10,
        seconds_per_run: SECONDS,
        connections: CONNECTIONS,
        protocol_version: LATEST_PROTOCOL_VERSION,
        runs: rows,
        rest_requests_per_s: Math.round(restRate),
        mcp_check_trust_requests_per_s: Math.round(mcpRate),
        mcp_to_rest_ratio: Math.round(ratio * 1000) / 1000,
        rest_requests_per_cpu_s: Math.round(restCpuRate),
        mcp_check_trust_requests_per_cpu_s: Math.round(mcpCpuRate),
        mcp_to_rest_cpu_ratio: Math.round(cpuRatio * 1000) / 1000,
        no_memo_to_rest_cpu_ratio: Math.round((noMemoRun.requests_per_cpu_s / restCpuRate) * 1000) / 1000,
        sdk_transport_to_rest_cpu_ratio: Math.round((sdkRun.requests_per_cpu_s / restCpuRate) * 1000) / 1000,
        target_ratio: TARGET_RATIO,
        meets_target: ratio >= TARGET_RATIO,
        meets_target_by_cpu: cpuRatio >= TARGET_RATIO,
        mcp_server_build_us: Math.round(buildUs * 10) / 10,
      },
      null,
      2,
    )}\n`,
  );
  console.log('wrote bench-results/mcp.json');
} finally {
  await noMemo.close();
  await sdkOnly.close();
  await app.close();
  await runtime.close();
}
