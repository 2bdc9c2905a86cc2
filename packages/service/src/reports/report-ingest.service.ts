import { randomFillSync } from 'node:crypto';
import {
  auditRepository,
  type InteractionReportRecord,
  pipelinedTransaction,
  reportAuditEvent,
  rollupsRepository,
} from '@observatory/db';
import { BatchWriter, refusalOf } from '../batch-writer.ts';
import type { Runtime } from '../runtime.ts';
import type { ReportInput } from '../schemas.ts';
import type { ServerResolver } from '../servers/server-resolver.ts';

export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

export interface ReportReceipt {
  recorded: true;
  report_id: string;
  server_url: string;
  server_created: boolean;
  received_at: string;
  /** COMPAT fields, as of the server's last analysis (reports fold in within seconds). */
  new_trust_score: number | null;
  total_interactions: number;
  success_rate: number | null;
}

/** Finds a tracked server's analysed row (the trust service's cached lookup). */
interface ServerLookup {
  find(identifier: string): Promise<
    | {
        trust_score: number | null;
        stats: { reports_30d: { total: number; success_rate: number | null } } | null;
      }
    | undefined
  >;
}

/** Random bytes are drawn in blocks: one getrandom call per 256 report ids instead of one each. */
const uuidPool = Buffer.alloc(4096);
let uuidPoolOffset = uuidPool.length;

/**
 * A random (version 4) UUID as 32 hex digits, without its dashes: what
 * randomUUID().replaceAll('-', '') gives, without the dashed string made and copied for each
 * report (measured: 1.4 µs -> 0.6 µs per id).
 */
export function undashedRandomUuid(): string {
  if (uuidPoolOffset + 16 > uuidPool.length) {
    randomFillSync(uuidPool);
    uuidPoolOffset = 0;
  }
  const at = uuidPoolOffset;
  uuidPoolOffset += 16;
  uuidPool[at + 6] = (uuidPool[at + 6]! & 0x0f) | 0x40; // version 4
  uuidPool[at + 8] = (uuidPool[at + 8]! & 0x3f) | 0x80; // variant 10xx (RFC 9562)
  return uuidPool.toString('hex', at, at + 16);
}

/** The millisecond of the last report id, in base 36: several reports share each millisecond. */
let idMs = -1;
let idMs36 = '';

/** Time-sortable, unique report ids: rpt_ + ms timestamp (base36) + a random UUID (122 bits). */
function newReportId(now: Date): string {
  const ms = now.getTime();
  if (ms !== idMs) {
    idMs = ms;
    idMs36 = ms.toString(36);
  }
  return `rpt_${idMs36}${undashedRandomUuid()}`;
}

/**
 * Agent reports are buffered and written in group-committed batches (up to 1000 reports, two
 * batches in flight, each one pipelined transaction of one round trip appending their audit
 * events, which are the reports' only record).
 * A report is acknowledged only when its batch is committed; if the database cannot take it,
 * the caller gets an error (→ 503) and nothing is acknowledged that could be lost. Scores are
 * not recomputed here: the analyzer folds reports in shortly after (see docs/scoring.md).
 */
export function reportIngestService(runtime: Runtime, servers: ServerResolver, lookup: ServerLookup) {
  const writer = new BatchWriter<InteractionReportRecord>(
    // A report is stored as its audit event (interaction_reports is a view of the log): no
    // report without its audit trail, and no second copy to keep in step with it. One round
    // trip: the events, their dirty marks (the analyzer folds these hours into rollups and
    // scores within seconds) and the COMMIT, queued together; the append lock is taken in the
    // database, from its append to the COMMIT, never across a round trip to this process.
    (batch) =>
      pipelinedTransaction(runtime.db.sql, async (tx) => ({
        result: null,
        inFlight: [
          rollupsRepository(tx).markDirty(
            batch.map((r) => ({ server_id: r.server_id, hour: r.received_at })),
          ),
          auditRepository(tx).queueAppend(batch.map(reportAuditEvent)),
        ],
      })),
    // Two batches at once: the audit lock orders their appends, and everything else overlaps.
    // Postgres classes 22 (data exception) and 23 (integrity): one report's content, not an outage.
    { maxBatch: 1000, maxConcurrent: 2, isolateOnError: isDataError },
  );
  runtime.beforeDatabaseClose(() => writer.drain());

  return {
    get bufferDepth() {
      return writer.depth;
    },

    async ingest(
      input: ReportInput,
      who: { agentId?: string | undefined; keyId?: number | null },
    ): Promise<ReportReceipt> {
      const server = await servers.resolveOrCreate(input.server_url);
      const now = new Date();
      const record: InteractionReportRecord = {
        report_id: newReportId(now),
        server_id: server.id,
        agent_id: input.agent_id ?? who.agentId ?? 'anonymous',
        key_id: who.keyId ?? null,
        received_at: now,
        success: input.success,
        latency_ms: input.latency_ms ?? null,
        tool_name: input.tool_name ?? null,
        error_type: input.error_type ?? null,
        error_message: input.error_message ?? null,
        http_status: input.http_status ?? null,
      };
      await writer.write(record).catch((err: unknown) => {
        throw refusalOf(err, 'The report could not be stored; it was not recorded. Retry shortly.');
      });
      const analysed = await lookup.find(server.url);
      return {
        new_trust_score: analysed?.trust_score ?? null,
        total_interactions: analysed?.stats?.reports_30d.total ?? 0,
        success_rate: analysed?.stats?.reports_30d.success_rate ?? null,
        recorded: true,
        report_id: record.report_id,
        server_url: server.url,
        server_created: server.created,
        received_at: now.toISOString(),
      };
    },

    drain: () => writer.drain(),
  };
}

export type ReportIngestService = ReturnType<typeof reportIngestService>;
