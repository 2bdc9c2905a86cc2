import { categorySchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { maybeTimestamp } from './output-fields.ts';

const rate = z.looseObject({ samples: z.number(), mean: z.number(), stddev: z.number() }).nullable();

export const getBaselinesTool = defineTool({
  name: 'get_baselines',
  title: 'Behavioural baselines of a category',
  guidance:
    'Typical latency (mean, geometric mean, p50, p95), availability and agent-reported success rate across the servers of one category, with how many servers the baseline rests on and the z-score rules anomalies are judged by. Compare a server against it, or use check_anomaly.',
  inputSchema: z.object({ category: categorySchema }),
  outputSchema: z.looseObject({
    category: z.string(),
    window_days: z.number(),
    computed_at: maybeTimestamp.describe('When the baseline was last computed; null if never'),
    servers: z.number().describe('How many servers the baseline rests on'),
    latency: z
      .looseObject({
        samples: z.number(),
        avg_latency_ms: z.number(),
        geometric_mean_ms: z.number(),
        p50_ms: z.number(),
        p95_ms: z.number(),
      })
      .nullable(),
    availability: rate.describe('Share of probes answered (0-1) across servers'),
    success_rate: rate.describe('Share of agent-reported calls that succeeded (0-1) across servers'),
    anomaly_rules: z.looseObject({}),
    note: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (args, { services }) => services.insights.baselines(args.category),
});
