import { serverUrlSchema } from '@observatory/service';
import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { notTracked } from './not-tracked.ts';

const anomaly = z.looseObject({
  metric: z.string().describe('What deviates, e.g. latency or availability'),
  scope: z.string().describe('self: against its own recent history; category: against its category'),
  severity: z.string().describe('low, medium or high'),
  detail: z.string(),
  observed: z.number(),
  baseline_mean: z.number(),
  baseline_stddev: z.number(),
  baseline_samples: z.number().describe('How many samples the baseline rests on'),
  z: z.number().describe('Standard deviations away from the baseline mean'),
  detected_at: z.string(),
});

export const checkAnomalyTool = defineTool({
  name: 'check_anomaly',
  title: 'Check a server for anomalies',
  guidance:
    'Pass the server URL. Returns is_anomalous, the open anomalies (metric, severity, z-score, how many samples the baseline has), recently cleared ones, the baselines compared against, and a recommendation. An untracked server is an error result.',
  inputSchema: z.object({ server_url: serverUrlSchema }),
  outputSchema: z.looseObject({
    server_url: z.string(),
    is_anomalous: z.boolean(),
    anomalies: z.array(anomaly),
    recently_cleared: z.array(z.looseObject({ metric: z.string(), cleared_at: z.string() })),
    server_baselines: z.looseObject({ method: z.string() }),
    recommendation: z.string(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (args, { services }) => {
    const result = await services.insights.checkAnomaly(args.server_url);
    if (!result) throw notTracked(args.server_url, 'baseline to compare with');
    return result;
  },
});
