import { boundedText, COMPLIANCE_PAGE_LIMIT } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { maybeString } from './output-fields.ts';

/** The same input bounds as GET /api/compliance. */
const day = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date as YYYY-MM-DD' })
    .describe(`${what} (YYYY-MM-DD, UTC, inclusive)`);

const interaction = z.looseObject({
  interaction_id: z.string(),
  timestamp: z.string(),
  event_type: z
    .string()
    .describe('report (an agent reported a call) or agent_query (a trust verdict was issued)'),
  server: z.looseObject({ url: maybeString, name: maybeString, category: maybeString }),
  agent_id: maybeString,
  tool_called: maybeString,
  input: maybeString,
  outcome: z
    .looseObject({})
    .describe('report: success, http_status, latency_ms; agent_query: verdict, score'),
  error: z.looseObject({ type: maybeString, message: maybeString }).nullable(),
  receipt_id: maybeString,
  audit: z.looseObject({ index: z.number(), leaf_hash: z.string(), event: z.unknown() }),
});

export const getComplianceReportTool = defineTool({
  name: 'get_compliance_report',
  title: 'Audit trail of recorded interactions',
  guidance: `EU AI Act Article 12-style record of agent reports and trust queries (time, server, agent, tool, outcome, latency, error, receipt), oldest first. Every filter is optional; server_url also takes a server's slug. Paged: pass page.next_cursor back as cursor until it is null; limit defaults to ${COMPLIANCE_PAGE_LIMIT.default} (max ${COMPLIANCE_PAGE_LIMIT.max}). Each page carries integrity proofs (signed checkpoint, range proof) so an auditor can check nothing in its range was left out.`,
  inputSchema: z.object({
    server_url: z.string().trim().max(2048).optional().describe('Only this server (its URL or slug)'),
    agent_id: boundedText(128).optional().describe('Only this agent'),
    start_date: day('First day').optional(),
    end_date: day('Last day').optional(),
    cursor: z.string().max(200).optional().describe('page.next_cursor of the previous page'),
    limit: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(COMPLIANCE_PAGE_LIMIT.max, { error: `must be at most ${COMPLIANCE_PAGE_LIMIT.max}` })
      .optional()
      .describe(
        `Records per page (default ${COMPLIANCE_PAGE_LIMIT.default}, max ${COMPLIANCE_PAGE_LIMIT.max})`,
      ),
  }),
  outputSchema: z.looseObject({
    compliance_framework: z.array(z.string()),
    generated_at: z.string(),
    filters_applied: z.looseObject({
      server_url: maybeString,
      agent_id: maybeString,
      start_date: maybeString,
      end_date: maybeString,
    }),
    total_records: z.number().describe('Records matching the filters, all pages together'),
    interactions: z.array(interaction),
    page: z.looseObject({ limit: z.number(), returned: z.number(), next_cursor: maybeString }),
    integrity: z.looseObject({
      log_index_range: z.looseObject({ from: z.number(), to: z.number() }),
      checkpoint: z.looseObject({ tree_size: z.number(), root_hash: z.string(), jws: z.string() }),
      range_proof: z.array(z.string()),
      how_to_verify: z.string(),
    }),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, { services }) => services.compliance.report(args),
});
