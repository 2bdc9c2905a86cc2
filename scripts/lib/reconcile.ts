import type { Database } from '@observatory/db';
import type { LedgerEntry } from './load-generator.ts';

/**
 * What was sent against what was stored. A report is either acknowledged (202, with a
 * report_id) and then stored exactly once, or refused with a problem — never acknowledged and
 * lost. A report is stored as its audit event (interaction_reports is a view of the audit log,
 * migration 0005), so a stored report is an audited one. A refused report may still have been
 * stored (the commit went through but the answer did not): that is counted, never an error.
 * Every 200 agent query carries a receipt that must be stored.
 */
export interface Reconciliation {
  reportsSent: number;
  reportsAcknowledged: number;
  reportsRefused: number;
  reportsStored: number;
  /** Acknowledged but missing from interaction_reports (the audit log): must be 0. */
  acknowledgedLost: string[];
  refusedButStored: number;
  /** Stored rows not matching any report sent, or stored twice: must be 0. */
  strayOrDuplicateRows: number;
  receiptsIssued: number;
  receiptsStored: number;
  /** Receipt ids handed out but not in the receipts table: must be 0. */
  receiptsLost: string[];
}

export async function reconcile(
  db: Database,
  ledger: LedgerEntry[],
  agentId = 'load-generator',
): Promise<Reconciliation> {
  const reports = ledger.filter((e) => e.kind === 'report');
  const acknowledged = reports.filter((e) => e.status === 202 && e.id);
  const refused = reports.filter((e) => !(e.status === 202 && e.id));
  const sentMarkers = new Set(reports.map((e) => e.marker));

  const stored = await db.sql<{ report_id: string; tool_name: string }[]>`
    SELECT report_id, tool_name FROM interaction_reports WHERE agent_id = ${agentId}`;
  const storedIds = new Set(stored.map((r) => r.report_id));
  const storedMarkers = new Map<string, number>();
  for (const r of stored) storedMarkers.set(r.tool_name, (storedMarkers.get(r.tool_name) ?? 0) + 1);
  const strayOrDuplicateRows = stored.filter(
    (r) => !sentMarkers.has(r.tool_name) || (storedMarkers.get(r.tool_name) ?? 0) > 1,
  ).length;

  const receiptIds = ledger.filter((e) => e.kind === 'query' && e.status === 200 && e.id).map((e) => e.id!);
  const receipts = await db.sql<{ id: string }[]>`SELECT id FROM receipts WHERE id = ANY(${receiptIds})`;
  const storedReceipts = new Set(receipts.map((r) => r.id));

  return {
    reportsSent: reports.length,
    reportsAcknowledged: acknowledged.length,
    reportsRefused: refused.length,
    reportsStored: stored.length,
    acknowledgedLost: acknowledged.filter((e) => !storedIds.has(e.id!)).map((e) => e.id!),
    refusedButStored: refused.filter((e) => storedMarkers.has(e.marker!)).length,
    strayOrDuplicateRows,
    receiptsIssued: receiptIds.length,
    receiptsStored: storedReceipts.size,
    receiptsLost: receiptIds.filter((id) => !storedReceipts.has(id)),
  };
}

const OK_STATUS = { report: 202, read: 200, query: 200 } as const;

/**
 * Answers that break the rules: anything but success, except — when a dependency the request
 * needs is away (`unavailableAllowed`) — a 503 problem+json. A 5xx other than 503, a bare 503
 * or no answer at all (the API hung or died) is always bad.
 */
export function badAnswers(entries: LedgerEntry[], unavailableAllowed: boolean): LedgerEntry[] {
  return entries.filter((e) => {
    if (e.status === OK_STATUS[e.kind]) return false;
    return !(unavailableAllowed && e.status === 503 && e.contentType.startsWith('application/problem+json'));
  });
}
