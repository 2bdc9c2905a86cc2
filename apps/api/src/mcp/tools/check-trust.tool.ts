import { serverUrlSchema } from '@observatory/service';
import { z } from 'zod';
import { shareAnswer } from '../shared-answers.ts';
import { defineTool } from '../tool-definition.ts';
import { maybeNumber, maybeString, maybeTimestamp, trustScoreField, verdictField } from './output-fields.ts';

const metrics = z.looseObject({
  total_calls: z.number().describe('Agent-reported calls over 30 days'),
  success_rate: maybeNumber.describe('Success rate of agent-reported calls over 30 days (0-1)'),
  avg_latency_ms: maybeNumber.describe('Mean latency of our probes over 24 h'),
  p50_latency_ms: maybeNumber,
  p95_latency_ms: maybeNumber,
  p99_latency_ms: maybeNumber,
  uptime_24h: maybeNumber.describe('Percent of probes answered over 24 h'),
  uptime_7d: maybeNumber,
  uptime_30d: maybeNumber,
  probes_24h: z.number(),
  agents_30d: z.number().describe('Distinct agents that reported calls over 30 days'),
});

export const checkTrustTool = defineTool({
  name: 'check_trust',
  title: 'Check trust of an MCP server',
  guidance:
    'Pass the URL of the server you are about to call. Returns trust_score, verdict, latency, uptime and success-rate metrics measured by real MCP handshake probes and agent reports. A server we do not track answers found:false with trust_score null: there is no runtime evidence, so treat it as unknown (register_server starts tracking it).',
  inputSchema: z.object({ server_url: serverUrlSchema }),
  outputSchema: z.looseObject({
    found: z.boolean().describe('false when the observatory does not track this server'),
    server_url: z.string(),
    trust_score: trustScoreField,
    verdict: verdictField,
    evidence: z
      .string()
      .describe('What the verdict rests on: none, reports_only, probes_only, probes_and_reports'),
    reason_code: z.string(),
    reason: z.string().optional(),
    message: z.string().optional().describe('Set when the server is not tracked'),
    name: z.string().optional(),
    slug: z.string().optional(),
    category: z.string().optional(),
    confidence: z.number().optional().describe('0-1: how much evidence backs the score'),
    metrics: metrics.optional(),
    recent_7d: z
      .looseObject({ interactions: z.number(), success_rate: maybeNumber, avg_latency_ms: maybeNumber })
      .optional(),
    components: z.looseObject({}).optional(),
    first_seen: z.string().optional(),
    last_checked: maybeTimestamp.optional(),
    last_outcome: maybeString.optional(),
    last_up: maybeTimestamp.optional(),
    last_error: maybeString.optional(),
    last_error_time: maybeTimestamp.optional(),
    tool_count: maybeNumber.optional(),
    protocol_version: maybeString.optional(),
    checked_at: z.string().optional(),
    status_url: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // the answer /api/trust sends, with its JSON text, shared for as long as the service shares it
  run: async (args, { services }) => {
    const answer = await services.trust.trustAnswer(args.server_url);
    return shareAnswer(answer.body, answer.json, answer.reusableUntil);
  },
});
