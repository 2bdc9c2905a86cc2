import type { Baseline, CategoryBaseline } from '@observatory/core';
import type { SqlOrTx } from '../client.ts';

export interface StoredBaseline {
  category: string;
  window_days: number;
  computed_at: Date;
  /** The whole baseline as packages/core computed it. */
  baseline: Baseline;
}

export function baselinesRepository(sql: SqlOrTx) {
  return {
    /** Replaces the baselines of these categories (columns for SQL readers, the rest in detail). */
    async upsert(baselines: CategoryBaseline[]): Promise<void> {
      if (baselines.length === 0) return;
      const rows = baselines.map((b) => ({
        category: b.category,
        window_days: b.window_days,
        computed_at: b.computed_at,
        servers: b.samples,
        samples: b.latency?.samples ?? 0,
        latency_mean_ms: b.latency?.mean_ms ?? null,
        latency_stddev_ms: b.latency?.stddev_ms ?? null,
        latency_log_mean: b.latency?.log_mean ?? null,
        latency_log_stddev: b.latency?.log_stddev ?? null,
        latency_p50_ms: b.latency?.p50_ms ?? null,
        latency_p95_ms: b.latency?.p95_ms ?? null,
        // probe success (availability); agent-reported success stays in detail
        success_rate_mean: b.availability?.mean ?? null,
        success_rate_stddev: b.availability?.stddev ?? null,
        detail: sql.json({
          samples: b.samples,
          latency: b.latency,
          availability: b.availability,
          success_rate: b.success_rate,
        } as never),
      }));
      await sql`
        INSERT INTO baselines ${sql(rows)}
        ON CONFLICT (category, window_days) DO UPDATE SET
          computed_at = EXCLUDED.computed_at, servers = EXCLUDED.servers, samples = EXCLUDED.samples,
          latency_mean_ms = EXCLUDED.latency_mean_ms, latency_stddev_ms = EXCLUDED.latency_stddev_ms,
          latency_log_mean = EXCLUDED.latency_log_mean, latency_log_stddev = EXCLUDED.latency_log_stddev,
          latency_p50_ms = EXCLUDED.latency_p50_ms, latency_p95_ms = EXCLUDED.latency_p95_ms,
          success_rate_mean = EXCLUDED.success_rate_mean, success_rate_stddev = EXCLUDED.success_rate_stddev,
          detail = EXCLUDED.detail`;
    },

    async list(): Promise<StoredBaseline[]> {
      const rows = await sql<
        { category: string; window_days: number; computed_at: Date; detail: Baseline }[]
      >`
        SELECT category, window_days, computed_at, detail FROM baselines ORDER BY category`;
      return rows.map((r) => ({
        category: r.category,
        window_days: r.window_days,
        computed_at: r.computed_at,
        baseline: r.detail,
      }));
    },
  };
}

export type BaselinesRepository = ReturnType<typeof baselinesRepository>;
