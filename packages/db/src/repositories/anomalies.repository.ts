import type { OpenAnomaly } from '@observatory/core';
import type { SqlOrTx } from '../client.ts';

export interface StoredAnomaly extends OpenAnomaly {
  id: number;
  server_id: number;
  cleared_at: Date | null;
}

/** As stored: the human-readable detail lives in a JSON column. */
type AnomalyRow = Omit<StoredAnomaly, 'detail'> & { detail: { text?: string } };

const fromRow = (r: AnomalyRow): StoredAnomaly => ({ ...r, detail: r.detail?.text ?? '' });

export function anomaliesRepository(sql: SqlOrTx) {
  return {
    async openFor(serverIds: number[]): Promise<StoredAnomaly[]> {
      if (serverIds.length === 0) return [];
      const rows = await sql<AnomalyRow[]>`
        SELECT * FROM anomalies WHERE server_id = ANY(${serverIds}::bigint[]) AND cleared_at IS NULL`;
      return rows.map(fromRow);
    },

    async recentFor(serverId: number, limit = 50): Promise<StoredAnomaly[]> {
      const rows = await sql<AnomalyRow[]>`
        SELECT * FROM anomalies WHERE server_id = ${serverId} ORDER BY detected_at DESC LIMIT ${limit}`;
      return rows.map(fromRow);
    },

    /** Applies one analysis step: open new anomalies, refresh the figures of open ones, clear recovered ones. */
    async apply(
      serverId: number,
      change: {
        opened: OpenAnomaly[];
        stillOpen: OpenAnomaly[];
        cleared: Array<OpenAnomaly & { cleared_at: Date }>;
      },
    ): Promise<void> {
      for (const a of change.opened) {
        await sql`
          INSERT INTO anomalies (server_id, metric, scope, observed, baseline_mean, baseline_stddev, baseline_samples,
            z, severity, detail, detected_at)
          VALUES (${serverId}, ${a.metric}, ${a.scope}, ${a.observed}, ${a.baseline_mean}, ${a.baseline_stddev},
            ${a.baseline_samples}, ${a.z}, ${a.severity}, ${sql.json({ text: a.detail })}, ${a.detected_at})
          ON CONFLICT (server_id, metric, scope) WHERE cleared_at IS NULL DO NOTHING`;
      }
      for (const a of change.stillOpen) {
        await sql`
          UPDATE anomalies SET observed = ${a.observed}, z = ${a.z}, severity = ${a.severity},
            baseline_mean = ${a.baseline_mean}, baseline_stddev = ${a.baseline_stddev},
            baseline_samples = ${a.baseline_samples}, detail = ${sql.json({ text: a.detail })}
          WHERE server_id = ${serverId} AND metric = ${a.metric} AND scope = ${a.scope} AND cleared_at IS NULL`;
      }
      for (const a of change.cleared) {
        await sql`
          UPDATE anomalies SET cleared_at = ${a.cleared_at}
          WHERE server_id = ${serverId} AND metric = ${a.metric} AND scope = ${a.scope} AND cleared_at IS NULL`;
      }
    },
  };
}

export type AnomaliesRepository = ReturnType<typeof anomaliesRepository>;
