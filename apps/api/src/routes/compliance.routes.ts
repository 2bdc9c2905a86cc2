import { boundedText, COMPLIANCE_PAGE_LIMIT, type Services, serverUrlSchema } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date as YYYY-MM-DD' });

const CSV_COLUMNS = [
  'interaction_id',
  'timestamp',
  'event_type',
  'server_url',
  'server_name',
  'server_category',
  'agent_id',
  'tool_called',
  'input',
  'success',
  'http_status',
  'latency_ms',
  'verdict',
  'score',
  'error_type',
  'error_message',
  'receipt_id',
  'audit_index',
  'leaf_hash',
] as const;

/** RFC 4180 quoting, and a leading ' on cells a spreadsheet would run as a formula. */
function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function complianceRoutes(app: FastifyInstance, services: Services) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/compliance',
    {
      schema: {
        tags: ['compliance'],
        summary:
          'Article 12-style audit trail, filterable and cursor-paged, JSON or CSV, with integrity proofs',
        description:
          'Every filter is optional. end_date is inclusive (the whole day, UTC). JSON pages carry a signed checkpoint, the leaf hashes of the other events in their index range and a range proof, so an auditor can check the page is complete.',
        querystring: z.object({
          server_url: z.string().trim().max(2048).optional().describe('Server URL or slug'),
          agent_id: boundedText(128).optional(),
          start_date: day.optional(),
          end_date: day.optional(),
          cursor: z.string().max(200).optional(),
          limit: z.coerce
            .number()
            .int()
            .min(1)
            .max(COMPLIANCE_PAGE_LIMIT.max, { error: `must be at most ${COMPLIANCE_PAGE_LIMIT.max}` })
            .optional(),
          format: z.enum(['json', 'csv']).default('json'),
        }),
      },
    },
    async (request, reply) => {
      const { format, ...filters } = request.query;
      const page = await services.compliance.report(filters);
      if (format === 'json') return page;
      const lines = [CSV_COLUMNS.join(',')];
      for (const i of page.interactions) {
        const o = i.outcome as Record<string, unknown>;
        const row: Record<(typeof CSV_COLUMNS)[number], unknown> = {
          interaction_id: i.interaction_id,
          timestamp: i.timestamp,
          event_type: i.event_type,
          server_url: i.server.url,
          server_name: i.server.name,
          server_category: i.server.category,
          agent_id: i.agent_id,
          tool_called: i.tool_called,
          input: i.input,
          success: o.success,
          http_status: o.http_status,
          latency_ms: o.latency_ms,
          verdict: o.verdict,
          score: o.score,
          error_type: i.error?.type,
          error_message: i.error?.message,
          receipt_id: i.receipt_id,
          audit_index: i.audit.index,
          leaf_hash: i.audit.leaf_hash,
        };
        lines.push(CSV_COLUMNS.map((c) => csvCell(row[c])).join(','));
      }
      const checkpoint = page.integrity.checkpoint;
      if (page.page.next_cursor) {
        const next = new URLSearchParams({
          ...Object.fromEntries(Object.entries(request.query).map(([k, v]) => [k, String(v)])),
          cursor: page.page.next_cursor,
        });
        reply.header('link', `</api/compliance?${next}>; rel="next"`);
      }
      return reply
        .type('text/csv; charset=utf-8')
        .header('x-total-records', String(page.total_records))
        .header('x-audit-checkpoint', `tree_size=${checkpoint.tree_size}; root_hash=${checkpoint.root_hash}`)
        .header('content-disposition', 'attachment; filename="observatory-audit-trail.csv"')
        .send(`${lines.join('\r\n')}\r\n`);
    },
  );

  api.get(
    '/api/attestation',
    {
      schema: {
        tags: ['compliance'],
        summary: 'MiCA / EU AI Act Article 12 attestation of a server (signed)',
        querystring: z.object({ server_url: serverUrlSchema }),
      },
    },
    async (request) => services.compliance.attestation(request.query.server_url),
  );
}
