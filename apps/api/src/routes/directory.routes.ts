import {
  categorySchema,
  LEADERBOARD_LIMIT,
  SERVERS_PAGE_LIMIT,
  type Services,
  serverUrlSchema,
} from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const limit = (max: number, fallback: number) =>
  z.coerce
    .number({ error: 'must be a whole number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(max, { error: `must be at most ${max}` })
    .default(fallback)
    .describe(`How many (default ${fallback}, max ${max})`);

export function directoryRoutes(app: FastifyInstance, services: Services) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/leaderboard',
    {
      schema: {
        tags: ['servers'],
        summary: 'Top-rated servers, optionally of one category',
        querystring: z.object({
          category: categorySchema.optional(),
          limit: limit(LEADERBOARD_LIMIT.max, LEADERBOARD_LIMIT.default),
        }),
      },
    },
    async (request) => services.directory.leaderboard(request.query),
  );

  api.get(
    '/api/servers',
    {
      schema: {
        tags: ['servers'],
        summary: 'Tracked servers, paged by cursor',
        querystring: z.object({
          category: categorySchema.optional(),
          limit: limit(SERVERS_PAGE_LIMIT.max, SERVERS_PAGE_LIMIT.default),
          cursor: z.string().max(200).optional().describe('next_cursor of the previous page'),
        }),
      },
    },
    async (request) => services.directory.servers(request.query),
  );

  api.get(
    '/api/stats',
    { schema: { tags: ['servers'], summary: 'Overall statistics and coverage' } },
    async () => services.directory.stats(),
  );

  api.get(
    '/api/external-agents',
    { schema: { tags: ['agents'], summary: 'Audit of the agents that report interactions' } },
    async () => services.directory.externalAgents(),
  );

  api.get(
    '/api/history',
    {
      schema: {
        tags: ['servers'],
        summary: 'Daily trust score and performance history of a server',
        querystring: z.object({
          url: serverUrlSchema,
          days: z.coerce.number().int().min(1).max(90, { error: 'must be at most 90' }).default(30),
        }),
      },
    },
    async (request) => {
      const history = await services.insights.history(request.query.url, request.query.days);
      return history ?? { found: false, server_url: request.query.url, days: [], trend: 'insufficient_data' };
    },
  );

  api.get(
    '/api/baselines',
    {
      schema: {
        tags: ['servers'],
        summary: 'Behavioural baseline of a category',
        querystring: z.object({ category: categorySchema }),
      },
    },
    async (request) => services.insights.baselines(request.query.category),
  );

  api.get(
    '/api/anomaly',
    {
      schema: {
        tags: ['servers'],
        summary: "Whether a server's recent behaviour deviates from its baselines",
        querystring: z.object({ url: serverUrlSchema }),
      },
    },
    async (request) => {
      const result = await services.insights.checkAnomaly(request.query.url);
      return (
        result ?? {
          found: false,
          server_url: request.query.url,
          is_anomalous: false,
          anomalies: [],
          recommendation: 'Not tracked: no baseline to compare with.',
        }
      );
    },
  );
}
