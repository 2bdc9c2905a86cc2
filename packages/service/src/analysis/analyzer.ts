import {
  aggregateWindow,
  type Baseline,
  type Category,
  computeCategoryBaselines,
  normalizeCategory,
  TRUST_RULES,
} from '@observatory/core';
import {
  baselinesRepository,
  rollupsRepository,
  type ServerRow,
  type Sql,
  type SqlOrTx,
} from '@observatory/db';
import { type AnalyzedServer, analyzeServers } from './server-analysis.ts';
import { evaluateTrust } from './trust-evaluation.ts';

const DAY_MS = 86_400_000;

export interface AnalysisPassResult {
  marks: number;
  servers: number;
  anomaliesOpened: number;
  anomaliesCleared: number;
}

/** Category baselines as stored by the last baselines pass. */
export async function loadCategoryBaselines(sql: SqlOrTx): Promise<Map<Category, Baseline>> {
  const stored = await baselinesRepository(sql).list();
  return new Map(stored.map((b) => [normalizeCategory(b.category), b.baseline]));
}

/** Writes what analyzeServers derived, plus today's score for the history. */
async function saveAnalysis(
  tx: SqlOrTx,
  analyzed: AnalyzedServer[],
  baselines: Map<Category, Baseline>,
  now: Date,
) {
  if (analyzed.length === 0) return;
  const rows = await tx<
    ServerRow[]
  >`SELECT * FROM servers WHERE id = ANY(${analyzed.map((a) => a.server_id)}::bigint[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const updates = analyzed.flatMap((a) => {
    const server = byId.get(a.server_id);
    if (!server) return [];
    const trust = evaluateTrust({ ...server, trust_inputs: a.trust_inputs }, baselines, now);
    return [
      {
        server_id: a.server_id,
        trust_inputs: a.trust_inputs,
        stats: a.stats,
        trust_score: trust.score,
        trust_verdict: trust.verdict,
      },
    ];
  });
  await tx`
    UPDATE servers s SET trust_inputs = u.trust_inputs, stats = u.stats, trust_score = u.trust_score,
      trust_verdict = u.trust_verdict, analyzed_at = ${now}
    FROM jsonb_to_recordset(${tx.json(updates as never)}::jsonb)
      AS u(server_id bigint, trust_inputs jsonb, stats jsonb, trust_score double precision, trust_verdict text)
    WHERE s.id = u.server_id`;
  await tx`
    UPDATE rollups_daily d SET trust_score = u.trust_score
    FROM jsonb_to_recordset(${tx.json(updates.map((u) => ({ server_id: u.server_id, trust_score: u.trust_score })) as never)}::jsonb)
      AS u(server_id bigint, trust_score double precision)
    WHERE d.server_id = u.server_id AND d.day = ${now.toISOString().slice(0, 10)}::date`;
}

/**
 * One incremental pass: takes the (server, hour) pairs marked dirty by the writers, recomputes
 * their rollups, then re-derives trust inputs, stats and anomalies of the servers touched — all
 * in one transaction per chunk, so a failed pass leaves the marks for the next one. Several
 * analyzers may run at once (SKIP LOCKED).
 */
export async function analyzeDirty(
  sql: Sql,
  now: Date = new Date(),
  chunk = 2_000,
): Promise<AnalysisPassResult> {
  const total: AnalysisPassResult = { marks: 0, servers: 0, anomaliesOpened: 0, anomaliesCleared: 0 };
  const baselines = await loadCategoryBaselines(sql);
  for (;;) {
    const taken = await sql.begin(async (tx) => {
      const rollups = rollupsRepository(tx);
      const { taken, marks } = await rollups.takeDirty(chunk);
      if (taken === 0) return 0;
      // Lock the servers first, in id order, as every multi-row writer of servers does (probe
      // batches too): overlapping passes and probe batches then wait in turn, never in a cycle.
      const ids = [...new Set(marks.map((m) => m.server_id))];
      const servers = await tx<{ id: number; category: string }[]>`
        SELECT id, category FROM servers WHERE id = ANY(${ids}::bigint[])
        ORDER BY id FOR NO KEY UPDATE`;
      await rollups.recompute(marks);
      const analyzed = await analyzeServers(tx, servers, baselines, now);
      await saveAnalysis(tx, analyzed, baselines, now);
      total.servers += analyzed.length;
      for (const a of analyzed) {
        total.anomaliesOpened += a.opened;
        total.anomaliesCleared += a.cleared;
      }
      return taken;
    });
    total.marks += taken;
    if (taken < chunk) return total;
  }
}

/**
 * Category baselines: each server's aggregate over the last categoryWindowDays (from daily
 * rollups), summarised per category.
 */
export async function recomputeBaselines(sql: SqlOrTx, now: Date = new Date()) {
  const days = TRUST_RULES.baseline.categoryWindowDays;
  const from = new Date(now.getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
  type DayRow = {
    server_id: number;
    category: string;
    probes: number;
    ups: number;
    reports: number;
    report_successes: number;
    latency_hist: number[];
  };
  const rows = await sql<DayRow[]>`
    SELECT d.server_id, s.category, d.probes, d.ups, d.reports, d.report_successes, d.latency_hist
    FROM rollups_daily d JOIN servers s ON s.id = d.server_id
    WHERE d.day >= ${from}::date AND d.day <= ${now.toISOString().slice(0, 10)}::date`;
  const byServer = new Map<number, { category: Category; rows: DayRow[] }>();
  for (const r of rows) {
    const entry = byServer.get(r.server_id) ?? { category: normalizeCategory(r.category), rows: [] };
    entry.rows.push(r);
    byServer.set(r.server_id, entry);
  }
  const baselines = computeCategoryBaselines(
    [...byServer.values()].map((s) => ({
      category: s.category,
      window: aggregateWindow(
        s.rows.map((r) => ({
          probes: r.probes,
          probesUp: r.ups,
          reports: r.reports,
          reportSuccesses: r.report_successes,
          latencyHist: r.latency_hist,
        })),
      ),
    })),
    now,
  );
  await baselinesRepository(sql).upsert(Object.values(baselines));
  return baselines;
}

/**
 * Full pass (start-up after an import, benchmarks, repair): recompute every rollup of the last
 * `days`, the category baselines, then every server's analysis.
 */
export async function analyzeEverything(sql: Sql, now: Date = new Date(), days = 30, chunk = 1_000) {
  const firstDay = Math.floor(now.getTime() / DAY_MS) * DAY_MS - days * DAY_MS;
  const dayList = Array.from({ length: days + 1 }, (_, i) =>
    new Date(firstDay + i * DAY_MS).toISOString().slice(0, 10),
  );
  const rollups = { hours: 0, days: 0 };
  // Days are independent: two at a time (one per core), each in a transaction with room to sort.
  const next = [...dayList];
  await Promise.all(
    [0, 1].map(async () => {
      for (let day = next.shift(); day; day = next.shift()) {
        const done = await sql.begin(async (tx) => {
          await tx`SET LOCAL work_mem = '64MB'`;
          return rollupsRepository(tx).recomputeDay(day);
        });
        rollups.hours += done.hours;
        rollups.days += done.days;
      }
    }),
  );
  await sql`DELETE FROM rollup_dirty WHERE hour >= ${new Date(firstDay)}`;
  await recomputeBaselines(sql, now);
  const baselines = await loadCategoryBaselines(sql);
  let servers = 0;
  for (let afterId = 0; ; ) {
    const page = await sql<{ id: number; category: string }[]>`
      SELECT id, category FROM servers WHERE id > ${afterId} ORDER BY id LIMIT ${chunk}`;
    if (page.length === 0) break;
    await sql.begin(async (tx) => {
      const analyzed = await analyzeServers(tx, page, baselines, now);
      await saveAnalysis(tx, analyzed, baselines, now);
    });
    servers += page.length;
    afterId = page[page.length - 1]!.id;
  }
  return { ...rollups, servers };
}
