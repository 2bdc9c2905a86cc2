import { auditLeafData, type StoredAuditEvent } from '@observatory/db';
import { HttpProblem } from '../problem.ts';
import type { ReceiptsService } from '../receipts/receipts.service.ts';
import type { Runtime } from '../runtime.ts';
import type { ServerResolver } from '../servers/server-resolver.ts';
import { auditPrunedBelow } from './audit-verification.ts';

export const COMPLIANCE_FRAMEWORKS = [
  'EU AI Act Article 12 (record-keeping: automatic logging of events over the lifetime of the system)',
  'National agentic AI governance framework (traceability and audit of agent-tool interactions)',
];
export const COMPLIANCE_PAGE_LIMIT = { default: 500, max: 5000 } as const;
/** A page never spans more leaves than this, so its integrity section stays bounded. */
const MAX_PAGE_SPAN = 20_000;

export interface ComplianceFilters {
  server_url?: string | undefined;
  agent_id?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

type Row = StoredAuditEvent & {
  server_url: string | null;
  server_name: string | null;
  server_category: string | null;
};

const encodeCursor = (idx: number) => Buffer.from(`a:${idx}`).toString('base64url');
function decodeCursor(cursor: string): number {
  const m = /^a:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!m)
    throw new HttpProblem(
      400,
      'Bad Request',
      'cursor is not one we issued; pass next_cursor from the previous page.',
      { errors: [{ field: 'cursor', message: 'is invalid' }] },
    );
  return Number(m[1]);
}

/** A YYYY-MM-DD that is a real calendar day, as the start of that UTC day. */
function parseDay(field: string, value: string | undefined): Date | null {
  if (value === undefined) return null;
  const d = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00.000Z`) : null;
  // years past 9998 would overflow once a day is added to an inclusive end date
  if (
    !d ||
    Number.isNaN(d.getTime()) ||
    d.toISOString().slice(0, 10) !== value ||
    d.getUTCFullYear() > 9998
  ) {
    throw new HttpProblem(400, 'Bad Request', `${field} must be a date as YYYY-MM-DD.`, {
      errors: [{ field, message: 'must be a date as YYYY-MM-DD' }],
    });
  }
  return d;
}

/** One recorded use, in the COMPAT.md shape, plus its place in the audit log. */
function interaction(e: Row) {
  const p = e.payload as Record<string, unknown>;
  const server = e.server_url
    ? { url: e.server_url, name: e.server_name, category: e.server_category }
    : { url: (p.server_url as string) ?? null, name: null, category: null };
  const isReport = e.event_type === 'report';
  return {
    interaction_id: e.event_id,
    timestamp: e.occurred_at.toISOString(),
    event_type: e.event_type,
    server,
    agent_id: e.agent_id,
    tool_called: isReport ? ((p.tool_name as string | null) ?? null) : 'agent-query',
    input: isReport ? null : ((p.query as string | undefined) ?? null),
    outcome: isReport
      ? {
          success: p.success as boolean,
          http_status: (p.http_status as number | null) ?? null,
          latency_ms: (p.latency_ms as number | null) ?? null,
        }
      : { verdict: p.verdict as string, score: (p.score as number | null) ?? null },
    error:
      isReport && (p.error_type || p.error_message)
        ? {
            type: (p.error_type as string | null) ?? null,
            message: (p.error_message as string | null) ?? null,
          }
        : null,
    receipt_id: e.receipt_id,
    audit: {
      index: e.idx,
      leaf_hash: e.leaf_hash,
      // the exact fields the leaf hash is computed from (see integrity.leaf_encoding)
      event: JSON.parse(auditLeafData(e)) as unknown,
    },
  };
}

/**
 * The Article 12-style audit trail: every recorded use (agent reports and trust queries) with
 * time, server, agent, tool or input, outcome, latency, error, receipt and audit ids, filtered
 * and cursor-paged by audit index. Each page also proves itself: it covers a contiguous range of
 * the audit log, gives the leaf hash of every other event in that range, and a range proof
 * against a signed checkpoint — so an auditor can check that nothing in the range was left out
 * or altered, without trusting our database.
 */
export function complianceExport(runtime: Runtime, receipts: ReceiptsService, servers: ServerResolver) {
  const { sql } = runtime.db;
  const base = runtime.config.publicBaseUrl;

  return {
    async page(filters: ComplianceFilters) {
      const start = parseDay('start_date', filters.start_date);
      const endDay = parseDay('end_date', filters.end_date);
      if (start && endDay && start > endDay) {
        throw new HttpProblem(400, 'Bad Request', 'start_date must not be after end_date.', {
          errors: [{ field: 'start_date', message: 'is after end_date' }],
        });
      }
      // end_date is inclusive: the whole day
      const end = endDay ? new Date(endDay.getTime() + 86_400_000) : null;
      const limit = filters.limit ?? COMPLIANCE_PAGE_LIMIT.default;
      let serverId: number | null = null;
      if (filters.server_url) {
        const server = URL.canParse(filters.server_url)
          ? await runtime.repos.servers.findByUrl(servers.normalize(filters.server_url))
          : await runtime.repos.servers.findByIdentifier(filters.server_url);
        serverId = server?.id ?? -1; // unknown server: nothing matches
      }

      const checkpoint = await receipts.checkpointNow();
      const n = checkpoint.tree_size;
      const where = sql`
        event_type IN ('report', 'agent_query')
        ${serverId !== null ? sql`AND server_id = ${serverId}` : sql``}
        ${filters.agent_id ? sql`AND agent_id = ${filters.agent_id}` : sql``}
        ${start ? sql`AND occurred_at >= ${start}` : sql``}
        ${end ? sql`AND occurred_at < ${end}` : sql``}`;

      let from = filters.cursor ? decodeCursor(filters.cursor) : 0;
      if (!filters.cursor && start) {
        const [first] = await sql<
          { idx: number | null }[]
        >`SELECT min(idx)::bigint AS idx FROM audit_events WHERE occurred_at >= ${start}`;
        from = first?.idx ?? n;
      }
      // rows below the retention edge are gone (their leaf hashes remain in the tree)
      from = Math.min(Math.max(from, await auditPrunedBelow(runtime)), n);
      const spanEnd = Math.min(n, from + MAX_PAGE_SPAN);
      const rows =
        from < spanEnd
          ? await sql<Row[]>`
              SELECT e.idx, e.event_id, e.event_type, e.occurred_at, e.server_id, e.agent_id, e.key_id, e.receipt_id,
                     e.payload, encode(e.leaf_hash, 'hex') AS leaf_hash,
                     s.url AS server_url, s.name AS server_name, s.category AS server_category
              FROM audit_events e LEFT JOIN servers s ON s.id = e.server_id
              WHERE e.idx >= ${from} AND e.idx < ${spanEnd} AND ${where}
              ORDER BY e.idx LIMIT ${limit}`
          : [];
      const to = rows.length === limit ? rows[rows.length - 1]!.idx + 1 : spanEnd;
      const [{ total } = { total: 0 }] = await sql<{ total: number }[]>`
        SELECT count(*)::int AS total FROM audit_events WHERE idx < ${n} AND ${where}`;

      let others: Array<{ index: number; leaf_hash: string }> = [];
      let rangeProof: string[] = [];
      if (from < to) {
        const included = rows.map((r) => r.idx);
        others = (
          await sql<{ idx: number; leaf_hash: string }[]>`
            SELECT idx, encode(leaf_hash, 'hex') AS leaf_hash FROM audit_events
            WHERE idx >= ${from} AND idx < ${to} AND NOT (idx = ANY(${included}::bigint[])) ORDER BY idx`
        ).map((r) => ({ index: r.idx, leaf_hash: r.leaf_hash }));
        rangeProof = await runtime.repos.audit.merkleLog().rangeProof(from, to, n);
      }
      const done = to >= n || (end !== null && rows.length < limit && (await pastEnd(to, end)));

      return {
        compliance_framework: COMPLIANCE_FRAMEWORKS,
        generated_at: new Date().toISOString(),
        filters_applied: {
          server_url: filters.server_url ?? null,
          agent_id: filters.agent_id ?? null,
          start_date: filters.start_date ?? null,
          end_date: filters.end_date ?? null,
        },
        total_records: total,
        interactions: rows.map(interaction),
        page: { limit, returned: rows.length, next_cursor: done ? null : encodeCursor(to) },
        integrity: {
          log_index_range: { from, to },
          checkpoint: {
            tree_size: n,
            root_hash: checkpoint.root_hash,
            issued_at: checkpoint.issued_at.toISOString(),
            kid: checkpoint.kid,
            jws: checkpoint.jws,
          },
          other_leaf_hashes: others,
          range_proof: rangeProof,
          jwks_url: `${base}/.well-known/jwks.json`,
          leaf_encoding:
            'leaf_hash = SHA-256(0x00 || UTF-8 of canonical JSON (keys sorted) of audit.event); nodes per RFC 6962 (0x01 prefix)',
          how_to_verify:
            'Hash every audit.event of interactions and take other_leaf_hashes: together they are the leaves from..to-1. Recompute the root of a tree of checkpoint.tree_size from them and range_proof (RFC 6962 split), compare with checkpoint.root_hash, and verify checkpoint.jws against the JWKS.',
        },
      };

      async function pastEnd(idx: number, endAt: Date): Promise<boolean> {
        const [next] = await sql<
          { occurred_at: Date }[]
        >`SELECT occurred_at FROM audit_events WHERE idx = ${idx}`;
        return !next || next.occurred_at >= new Date(endAt.getTime() + 60_000);
      }
    },
  };
}

export type ComplianceExport = ReturnType<typeof complianceExport>;
