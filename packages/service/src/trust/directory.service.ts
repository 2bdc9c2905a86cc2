import { CATEGORIES } from '@observatory/core';
import { cachedFor } from '../cached.ts';
import { HttpProblem } from '../problem.ts';
import type { Runtime } from '../runtime.ts';
import type { AnalyzedServerRow } from './trust.service.ts';

export const LEADERBOARD_LIMIT = { default: 10, max: 50 } as const;
export const SERVERS_PAGE_LIMIT = { default: 50, max: 500 } as const;

/** Opaque cursors: base64url of the last id seen, so clients can't depend on the encoding. */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`s:${lastId}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  const text = Buffer.from(cursor, 'base64url').toString();
  const m = /^s:(\d{1,15})$/.exec(text);
  if (!m) {
    throw new HttpProblem(
      400,
      'Bad Request',
      'cursor is not one we issued; pass next_cursor from the previous page.',
      {
        errors: [{ field: 'cursor', message: 'is invalid' }],
      },
    );
  }
  return Number(m[1]);
}

const round = (v: number | null | undefined, digits = 1) =>
  v === null || v === undefined ? null : Math.round(v * 10 ** digits) / 10 ** digits;

/** Listing entry (COMPAT leaderboard names). */
function listEntry(s: AnalyzedServerRow) {
  return {
    url: s.url,
    name: s.name,
    slug: s.slug,
    category: s.category,
    trust_score: round(s.trust_score),
    verdict: s.trust_verdict,
    success_rate: s.stats?.reports_30d.success_rate ?? null,
    uptime_24h: s.stats?.uptime.uptime_24h.ratio ?? null,
    avg_latency_ms: s.stats?.latency_24h.mean_ms ?? null,
    p95_latency_ms: s.stats?.latency_24h.p95_ms ?? null,
    total_interactions: s.stats?.reports_30d.total ?? 0,
    last_outcome: s.last_outcome,
    last_checked: s.last_probe_at?.toISOString() ?? null,
    tracked_since: s.created_at.toISOString(),
  };
}

/**
 * How old /api/stats and /api/external-agents may be. Both count and group every report (a
 * scan of the audit log's report rows), and they are public: read once per few seconds per
 * process, not once per request.
 */
export const DIRECTORY_TOTALS_TTL_MS = 5_000;

/** Rows of /api/external-agents: the agents that reported most recently. */
const EXTERNAL_AGENTS_LIMIT = 500;

/** Questions about the whole fleet: rankings, listings, totals, coverage, who reports. */
export function directoryService(runtime: Runtime) {
  const dir = runtime.repos.directory;
  const stats = cachedFor(DIRECTORY_TOTALS_TTL_MS, () => readStats());
  const externalAgents = cachedFor(DIRECTORY_TOTALS_TTL_MS, () => readExternalAgents());

  async function readStats() {
    const now = new Date();
    const [totals, coverage] = await Promise.all([dir.totals(now), dir.coverage(now)]);
    const byCategory = new Map(coverage.map((c) => [c.category, c]));
    const newest = [totals.last_probe_at, totals.last_report_at]
      .filter((d): d is Date => d !== null)
      .sort((a, b) => b.getTime() - a.getTime())[0];
    return {
      total_servers_tracked: totals.servers,
      total_interactions_recorded: totals.reports,
      average_trust_score: round(totals.avg_score),
      interactions_last_24h: totals.reports_24h,
      probes_last_24h: totals.probes_24h,
      categories: CATEGORIES.map((name) => ({
        name,
        servers: byCategory.get(name)?.indexed ?? 0,
        with_behavioural_record: byCategory.get(name)?.with_record ?? 0,
        verifiable_24h: byCategory.get(name)?.verifiable ?? 0,
      })),
      data_collection_started: runtime.dataSince,
      data_freshness: {
        last_probe_at: totals.last_probe_at?.toISOString() ?? null,
        last_report_at: totals.last_report_at?.toISOString() ?? null,
        seconds_since_last_data: newest ? Math.round((now.getTime() - newest.getTime()) / 1000) : null,
      },
      generated_at: now.toISOString(),
    };
  }

  async function readExternalAgents() {
    const { rows, totals } = await dir.agents(new Date(), EXTERNAL_AGENTS_LIMIT);
    return {
      rows: rows.map((r) => ({
        ...r,
        first_seen: r.first_seen.toISOString(),
        last_seen: r.last_seen.toISOString(),
      })),
      totals,
      generated_at: new Date().toISOString(),
    };
  }

  return {
    async leaderboard(opts: { category?: string | undefined; limit?: number | undefined }) {
      const limit = opts.limit ?? LEADERBOARD_LIMIT.default;
      const rows = (await dir.leaderboard({ category: opts.category, limit })) as AnalyzedServerRow[];
      return {
        category: opts.category ?? 'all',
        servers: rows.map(listEntry),
        total_results: rows.length,
        generated_at: new Date().toISOString(),
      };
    },

    async servers(opts: {
      category?: string | undefined;
      limit?: number | undefined;
      cursor?: string | undefined;
    }) {
      const limit = opts.limit ?? SERVERS_PAGE_LIMIT.default;
      const rows = (await dir.page({
        category: opts.category,
        afterId: decodeCursor(opts.cursor),
        limit: limit + 1,
      })) as AnalyzedServerRow[];
      const page = rows.slice(0, limit);
      return {
        category: opts.category ?? 'all',
        servers: page.map((s) => ({ ...listEntry(s), source: s.source, description: s.description })),
        count: page.length,
        next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null,
      };
    },

    /** Overall statistics (COMPAT names), at most DIRECTORY_TOTALS_TTL_MS old. */
    stats: () => stats.get(),

    /** /atlas/report: how much of what we index we can actually vouch for. */
    async atlas() {
      const now = new Date();
      const coverage = await dir.coverage(now);
      const pct = (n: number, d: number) => (d > 0 ? Math.round((n / d) * 10_000) / 100 : 0);
      const sum = (f: (c: (typeof coverage)[number]) => number) => coverage.reduce((s, c) => s + f(c), 0);
      const indexed = sum((c) => c.indexed);
      const withRecord = sum((c) => c.with_record);
      const verifiable = sum((c) => c.verifiable);
      return {
        generated_at: now.toISOString(),
        definitions: {
          indexed: 'servers the observatory knows (registered, reported or imported)',
          with_behavioural_record: 'servers with at least one probe or agent report',
          verifiable_at_runtime: 'servers that answered an MCP handshake probe in the last 24 hours',
        },
        totals: {
          indexed,
          with_behavioural_record: withRecord,
          verifiable_at_runtime: verifiable,
          with_behavioural_record_pct: pct(withRecord, indexed),
          verifiable_at_runtime_pct: pct(verifiable, indexed),
        },
        categories: CATEGORIES.map((name) => {
          const c = coverage.find((x) => x.category === name);
          const n = c?.indexed ?? 0;
          return {
            category: name,
            indexed: n,
            with_behavioural_record: c?.with_record ?? 0,
            verifiable_at_runtime: c?.verifiable ?? 0,
            with_behavioural_record_pct: pct(c?.with_record ?? 0, n),
            verifiable_at_runtime_pct: pct(c?.verifiable ?? 0, n),
            average_trust_score: round(c?.avg_score),
          };
        }),
      };
    },

    /** Who reported what (COMPAT names), at most DIRECTORY_TOTALS_TTL_MS old. */
    externalAgents: () => externalAgents.get(),
  };
}

export type DirectoryService = ReturnType<typeof directoryService>;
