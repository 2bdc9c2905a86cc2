import { z } from 'zod';
import { defineTool } from '../tool-definition.ts';
import { maybeNumber, maybeTimestamp } from './output-fields.ts';

export const observatoryStatsTool = defineTool({
  name: 'observatory_stats',
  title: 'Observatory statistics',
  guidance:
    'No arguments. Totals (servers tracked, interactions recorded, average trust score, activity over 24 h), coverage per category (indexed, with a behavioural record, verifiable at runtime), the first day of data, and how fresh the data is.',
  // Strict: an agent passing arguments here has the wrong tool in mind, so it is told.
  inputSchema: z.strictObject({}),
  outputSchema: z.looseObject({
    total_servers_tracked: z.number(),
    total_interactions_recorded: z.number(),
    average_trust_score: maybeNumber,
    interactions_last_24h: z.number(),
    probes_last_24h: z.number(),
    categories: z.array(
      z.looseObject({
        name: z.string(),
        servers: z.number(),
        with_behavioural_record: z.number(),
        verifiable_24h: z.number(),
      }),
    ),
    data_collection_started: z.string(),
    data_freshness: z.looseObject({
      last_probe_at: maybeTimestamp,
      last_report_at: maybeTimestamp,
      seconds_since_last_data: maybeNumber,
    }),
    generated_at: z.string(),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: (_args, { services }) => services.directory.stats(),
});
