import { serverUrlSchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { notTracked } from './not-tracked.ts';
import { maybeNumber } from './output-fields.ts';

/** The same bounds as GET /api/history. */
const HISTORY_DAYS = { default: 30, max: 90 } as const;

export const getServerHistoryTool = defineTool({
  name: 'get_server_history',
  title: 'Daily history of a server',
  guidance: `One entry per UTC day, oldest first (days without data included, with null figures): calls (probes + agent reports), success_rate, avg_latency_ms, uptime and trust_score, plus the score trend. days defaults to ${HISTORY_DAYS.default} (max ${HISTORY_DAYS.max}). An untracked server is an error result.`,
  inputSchema: z.object({
    server_url: serverUrlSchema,
    days: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(HISTORY_DAYS.max, { error: `must be at most ${HISTORY_DAYS.max}` })
      .default(HISTORY_DAYS.default)
      .describe(`How many days back (default ${HISTORY_DAYS.default}, max ${HISTORY_DAYS.max})`),
  }),
  outputSchema: z.looseObject({
    server_url: z.string(),
    name: z.string(),
    days: z.array(
      z.looseObject({
        date: z.string().describe('UTC day, YYYY-MM-DD'),
        calls: z.number(),
        probes: z.number(),
        reports: z.number(),
        success_rate: maybeNumber,
        avg_latency_ms: maybeNumber,
        uptime: maybeNumber,
        trust_score: maybeNumber,
      }),
    ),
    trend: z.enum(['improving', 'stable', 'declining', 'insufficient_data']),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, { services }) => {
    const history = await services.insights.history(args.server_url, args.days);
    if (!history) throw notTracked(args.server_url, 'history');
    return history;
  },
});
