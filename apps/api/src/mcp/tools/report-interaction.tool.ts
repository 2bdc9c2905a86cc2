import { reportSchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';

export const reportInteractionTool = defineTool({
  name: 'report_interaction',
  title: 'Report a call to an MCP server',
  guidance:
    'Call it after each call you make to an MCP server: server_url and success are required; add latency_ms, tool_name, and on failure error_type, error_message and http_status. agent_id names you (default "anonymous"). A server not yet tracked starts being tracked. Stored when acknowledged; trust scores fold it in within seconds.',
  inputSchema: reportSchema,
  outputSchema: z.looseObject({
    recorded: z.literal(true),
    report_id: z.string().describe('Identifier of the stored report (it also appears in the audit trail)'),
    server_url: z.string().describe('The server URL as normalized by the observatory'),
    server_created: z
      .boolean()
      .describe('true when this report made the observatory start tracking the server'),
    received_at: z.string(),
    message: z.string(),
  }),
  // Every call stores one more report: it writes, adds only, and is not idempotent.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: async (args, { services }) => ({
    ...(await services.reports.ingest(args, {})),
    message: 'Report stored; the trust score will reflect it within seconds.',
  }),
});
