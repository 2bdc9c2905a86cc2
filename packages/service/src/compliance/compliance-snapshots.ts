import type { Runtime } from '../runtime.ts';
import { assessServerCompliance } from './compliance-assessment.ts';

const DAY_MS = 86_400_000;

/**
 * The daily compliance snapshot of every server for one UTC day: grade, risk level, monitoring
 * continuity (gaps in probing) and counts. The primary key (server_id, day) makes it exactly one
 * snapshot per server per day, however many times the job runs.
 */
export async function takeComplianceSnapshots(
  runtime: Runtime,
  day: string,
): Promise<{ servers: number; created: number }> {
  const { sql } = runtime.db;
  const from = new Date(`${day}T00:00:00.000Z`);
  const to = new Date(from.getTime() + DAY_MS);
  let created = 0;
  let servers = 0;
  for (let afterId = 0; ; ) {
    const page = await sql<
      { id: number; created_at: Date; trust_score: number | null; day_score: number | null }[]
    >`
      SELECT s.id, s.created_at, s.trust_score, d.trust_score AS day_score
      FROM servers s LEFT JOIN rollups_daily d ON d.server_id = s.id AND d.day = ${day}::date
      WHERE s.id > ${afterId} AND s.created_at < ${to}
      ORDER BY s.id LIMIT 500`;
    if (page.length === 0) break;
    for (const s of page) {
      const a = await assessServerCompliance(sql, {
        serverId: s.id,
        createdAt: s.created_at,
        from,
        to,
        trustScore: s.day_score ?? s.trust_score,
        expectedIntervalS: runtime.config.PROBE_INTERVAL_S,
        auditExportable: true,
        extraMonitoringDays: 1,
      });
      const result = await sql`
        INSERT INTO compliance_snapshots (server_id, day, grade, risk_level, trust_score, continuity, counts)
        VALUES (${s.id}, ${day}::date, ${a.compliance_grade}, ${a.risk_level}, ${s.day_score ?? s.trust_score},
                ${sql.json(a.continuity as never)}, ${sql.json({ records: a.records, findings: a.findings } as never)})
        ON CONFLICT (server_id, day) DO NOTHING`;
      created += result.count;
    }
    servers += page.length;
    afterId = page[page.length - 1]!.id;
  }
  return { servers, created };
}
