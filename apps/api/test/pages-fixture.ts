import { createHash } from 'node:crypto';
import type { ProbeOutcome, ProbeResult } from '@observatory/core';
import type { ProbeResultRecord } from '@observatory/db';
import { analyzeEverything, type Services } from '@observatory/service';

/**
 * Test support for the pages: months of probe history for a server, written through the same
 * repository the worker uses (so rollups, drift and the server's probe state are derived by
 * the real code), then one full analysis pass. The history is made up; everything computed
 * from it is not.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface ProbePlan {
  outcome: ProbeOutcome;
  ms: number;
  error?: string;
  httpStatus?: number;
}

export interface HistoryPlan {
  /** Days of history ending at `now` (probes every `everyMinutes`). */
  days: number;
  everyMinutes?: number;
  /** What the probe at time `at` saw; `age` is ms before now. */
  probe(at: Date, age: number): ProbePlan;
  /** The tool names the server lists at time `at`. */
  tools?(at: Date): string[];
}

/** mulberry32: reproducible "random" latencies. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function result(at: Date, plan: ProbePlan, tools: string[]): ProbeResult {
  const answered = plan.outcome === 'up' || plan.outcome === 'degraded';
  const toolList = tools.map((name) => ({ name, hash: sha(`tool:${name}`) }));
  return {
    outcome: plan.outcome,
    error_type: answered ? null : plan.outcome === 'not_mcp' ? 'invalid_response' : 'connect',
    error_message: answered ? null : (plan.error ?? 'connect ECONNREFUSED'),
    http_status: plan.httpStatus ?? (answered ? 200 : null),
    timings: {
      connect_ms: answered ? plan.ms * 0.2 : null,
      initialize_ms: answered ? plan.ms * 0.4 : null,
      ping_ms: answered ? plan.ms * 0.1 : null,
      tools_list_ms: answered ? plan.ms * 0.3 : null,
      total_ms: plan.ms,
    },
    transport: answered ? 'streamable_http' : null,
    protocol_version: answered ? '2025-06-18' : null,
    server_info: answered ? { name: 'fixture', version: '1.0.0' } : null,
    tool_count: answered ? toolList.length : null,
    tools_hash: answered ? sha(toolList.map((t) => t.hash).join(',')) : null,
    tools: answered ? toolList : null,
    auth_resource_metadata: null,
    started_at: at,
  };
}

/** Writes the planned probes of one server (oldest first, in batches) through the repository. */
export async function seedHistory(services: Services, serverId: number, now: Date, plan: HistoryPlan) {
  const { repos, config } = services.runtime;
  const every = (plan.everyMinutes ?? 60) * 60_000;
  const first = now.getTime() - plan.days * DAY_MS;
  await repos.probeResults.ensurePartitions(new Date(first), now);
  let batch: ProbeResultRecord[] = [];
  for (let t = first + every; t <= now.getTime(); t += every) {
    const at = new Date(t);
    batch.push({
      probe_id: `seed-${serverId}-${t}`,
      server_id: serverId,
      scheduled_at: at,
      result: result(at, plan.probe(at, now.getTime() - t), plan.tools?.(at) ?? ['echo']),
    });
    if (batch.length === 500) {
      await repos.probeResults.insertBatch(batch, { intervalSeconds: config.PROBE_INTERVAL_S });
      batch = [];
    }
  }
  await repos.probeResults.insertBatch(batch, { intervalSeconds: config.PROBE_INTERVAL_S });
  // the server was tracked from its first probe on (status pages show "tracked since")
  await services.runtime.db.sql`UPDATE servers SET created_at = ${new Date(first)} WHERE id = ${serverId}`;
}

/** Registers a server the way an owner would; returns its id and slug. */
export async function register(
  services: Services,
  input: { url: string; name: string; category: string; description?: string },
) {
  const r = await services.registration.register({
    server_url: input.url,
    name: input.name,
    category: input.category,
    ...(input.description ? { description: input.description } : {}),
  });
  const server = await services.runtime.repos.servers.findByUrl(r.server_url);
  return { id: server!.id, slug: server!.slug, url: server!.url };
}

/** Rollups, category baselines and every server's analysis, as of `now`. */
export async function analyze(services: Services, now: Date, days = 90) {
  await analyzeEverything(services.runtime.db.sql, now, days);
}

/**
 * "Acme Weather": 90 days of hourly probes with a six-hour outage 20 days ago, two hours of
 * 502s three days ago, a few failed probes here and there, a tool-list change 35 days ago, and a slow last hour (a latency
 * anomaly against its own baseline).
 */
export function acmeWeatherPlan(now: Date): HistoryPlan {
  const random = seededRandom(42);
  const outageStart = now.getTime() - 20 * DAY_MS - 5 * HOUR_MS;
  const toolChange = now.getTime() - 35 * DAY_MS;
  return {
    days: 90,
    probe(at, age) {
      const t = at.getTime();
      if (t >= outageStart && t < outageStart + 6 * HOUR_MS) {
        return { outcome: 'down', ms: 10_000, error: 'timed out after 10000 ms' };
      }
      if (age >= 3 * DAY_MS && age < 3 * DAY_MS + 2 * HOUR_MS) {
        return { outcome: 'down', ms: 31, error: 'HTTP 502 Bad Gateway', httpStatus: 502 };
      }
      if (random() < 0.004) return { outcome: 'down', ms: 25, error: 'connect ECONNRESET' };
      // a daily rhythm plus noise; the last two hours are three times slower
      const base = 95 + 25 * Math.sin((at.getUTCHours() / 24) * 2 * Math.PI) + random() * 40;
      return { outcome: 'up', ms: age < 2 * HOUR_MS ? base * 3.2 : base };
    },
    tools: (at) =>
      at.getTime() < toolChange
        ? ['current_conditions', 'forecast_daily', 'legacy_alerts']
        : ['current_conditions', 'forecast_daily', 'forecast_hourly', 'severe_alerts'],
  };
}

/** A steady server: `uptime` share of probes up, latency around `ms`. */
export function steadyPlan(seed: number, ms: number, uptime: number, days = 30): HistoryPlan {
  const random = seededRandom(seed);
  return {
    days,
    probe: () =>
      random() < uptime
        ? { outcome: 'up', ms: ms * (0.7 + random() * 0.6) }
        : { outcome: 'down', ms: 20, error: 'connect ECONNREFUSED' },
  };
}
