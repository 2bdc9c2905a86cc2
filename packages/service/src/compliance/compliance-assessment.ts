import {
  assessCompliance,
  type ComplianceAssessment,
  continuityFromHourlyCounts,
  type MonitoringContinuity,
} from '@observatory/core';
import type { SqlOrTx } from '@observatory/db';

/**
 * The compliance picture of one server over a period, from its hourly rollups (probing
 * continuity, records) and its daily snapshots (monitoring days): shared by the daily snapshot
 * and the on-demand attestation so both judge alike.
 */
export async function assessServerCompliance(
  sql: SqlOrTx,
  input: {
    serverId: number;
    createdAt: Date;
    from: Date;
    to: Date;
    trustScore: number | null;
    expectedIntervalS: number;
    auditExportable: boolean;
    /** Snapshot days to count on top of the stored ones (the snapshot being made). */
    extraMonitoringDays?: number;
  },
): Promise<ComplianceAssessment & { continuity: MonitoringContinuity; records: number }> {
  const from = new Date(Math.max(input.createdAt.getTime(), input.from.getTime()));
  const hours = await sql<{ hour: Date; probes: number; reports: number }[]>`
    SELECT hour, probes + inconclusive AS probes, reports FROM rollups_hourly
    WHERE server_id = ${input.serverId} AND hour >= ${new Date(Math.floor(from.getTime() / 3_600_000) * 3_600_000)}
      AND hour < ${input.to}`;
  const [snap] = await sql<{ days: number }[]>`
    SELECT count(*)::int AS days FROM compliance_snapshots WHERE server_id = ${input.serverId}`;
  const continuity = continuityFromHourlyCounts(hours, {
    from,
    to: input.to,
    expectedIntervalS: input.expectedIntervalS,
  });
  const records = hours.reduce((s, h) => s + h.probes + h.reports, 0);
  const assessment = assessCompliance({
    trustScore: input.trustScore,
    records,
    monitoringDays: (snap?.days ?? 0) + (input.extraMonitoringDays ?? 0),
    continuity,
    auditExportable: input.auditExportable,
  });
  return { ...assessment, continuity, records };
}
