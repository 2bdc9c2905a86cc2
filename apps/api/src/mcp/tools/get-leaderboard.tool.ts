import { categorySchema, LEADERBOARD_LIMIT } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { maybeNumber, maybeString, maybeTimestamp, trustScoreField } from './output-fields.ts';

export const getLeaderboardTool = defineTool({
  name: 'get_leaderboard',
  title: 'Top-rated MCP servers',
  guidance: `Ranked by trust score, best first. Omit category for all servers; limit defaults to ${LEADERBOARD_LIMIT.default} (max ${LEADERBOARD_LIMIT.max}).`,
  inputSchema: z.object({
    category: categorySchema.optional(),
    limit: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(LEADERBOARD_LIMIT.max, { error: `must be at most ${LEADERBOARD_LIMIT.max}` })
      .default(LEADERBOARD_LIMIT.default)
      .describe(`How many servers (default ${LEADERBOARD_LIMIT.default}, max ${LEADERBOARD_LIMIT.max})`),
  }),
  outputSchema: z.looseObject({
    category: z.string().describe('The category asked for, or "all"'),
    servers: z.array(
      z.looseObject({
        url: z.string(),
        name: z.string(),
        slug: z.string(),
        category: z.string(),
        trust_score: trustScoreField,
        verdict: maybeString,
        success_rate: maybeNumber,
        uptime_24h: maybeNumber,
        avg_latency_ms: maybeNumber,
        p95_latency_ms: maybeNumber,
        total_interactions: z.number(),
        last_outcome: maybeString,
        last_checked: maybeTimestamp,
        tracked_since: z.string(),
      }),
    ),
    total_results: z.number(),
    generated_at: z.string(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, { services }) => services.directory.leaderboard(args),
});
