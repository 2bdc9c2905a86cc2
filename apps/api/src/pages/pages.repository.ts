import type { ServerRow, SqlOrTx, StoredProbeResult } from '@observatory/db';

export interface Incident {
  /** The outcome of the run: anything but a clean `up`. */
  outcome: StoredProbeResult['outcome'];
  started_at: Date;
  /** First probe that came back different; null while the incident is still going on. */
  ended_at: Date | null;
  probes: number;
  /** What the latest probe of the run said went wrong. */
  error_type: string | null;
  error_message: string | null;
  http_status: number | null;
}

export interface DriftEventRow {
  detected_at: Date;
  old_hash: string | null;
  new_hash: string;
  added: string[];
  removed: string[];
  altered: string[];
}

/**
 * The few reads only the HTML pages need (search, incidents, drift history). Kept beside the pages
 * as tagged-template SQL; move them to packages/db if another front end needs them.
 */
export function pagesRepository(sql: SqlOrTx) {
  return {
    /**
     * Servers whose name, slug or URL contains the text (case-insensitive); exact matches
     * first, then the best scored. strpos instead of LIKE: the text is never a pattern.
     */
    async search(text: string, limit: number): Promise<ServerRow[]> {
      const q = text.trim().toLowerCase();
      return sql<ServerRow[]>`
        SELECT * FROM servers
        WHERE strpos(lower(name), ${q}) > 0 OR strpos(slug, ${q}) > 0 OR strpos(lower(url), ${q}) > 0
        ORDER BY (lower(name) = ${q} OR slug = ${q} OR lower(url) = ${q}) DESC,
          trust_score DESC NULLS LAST, id
        LIMIT ${limit}`;
    },

    /**
     * Incidents since `since`, newest first: each run of consecutive probes with the same
     * outcome other than `up` (gaps and islands over the server's probes), ending at the first
     * probe that came back different.
     */
    async incidents(serverId: number, since: Date, limit: number): Promise<Incident[]> {
      return sql<Incident[]>`
        WITH p AS (
          SELECT scheduled_at, started_at, outcome, error_type, error_message, http_status,
            CASE WHEN outcome IS DISTINCT FROM lag(outcome) OVER (ORDER BY scheduled_at) THEN 1 ELSE 0 END AS change
          FROM probe_results WHERE server_id = ${serverId} AND scheduled_at >= ${since}
        ), numbered AS (
          SELECT *, sum(change) OVER (ORDER BY scheduled_at) AS run FROM p
        ), runs AS (
          SELECT run, min(outcome) AS outcome, min(started_at) AS started_at, count(*)::int AS probes,
            (array_agg(error_type ORDER BY scheduled_at DESC))[1] AS error_type,
            (array_agg(error_message ORDER BY scheduled_at DESC))[1] AS error_message,
            (array_agg(http_status ORDER BY scheduled_at DESC))[1] AS http_status
          FROM numbered GROUP BY run
        ), bounded AS (
          SELECT *, lead(started_at) OVER (ORDER BY run) AS ended_at FROM runs
        )
        SELECT outcome, started_at, ended_at, probes, error_type, error_message, http_status
        FROM bounded WHERE outcome <> 'up' ORDER BY run DESC LIMIT ${limit}`;
    },

    async driftEvents(serverId: number, limit: number): Promise<DriftEventRow[]> {
      return sql<DriftEventRow[]>`
        SELECT detected_at, old_hash, new_hash, added, removed, altered FROM drift_events
        WHERE server_id = ${serverId} ORDER BY detected_at DESC, id DESC LIMIT ${limit}`;
    },
  };
}

export type PagesRepository = ReturnType<typeof pagesRepository>;
