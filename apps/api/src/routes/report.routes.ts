import { reportSchema, type Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

export function reportRoutes(app: FastifyInstance, services: Services) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/report',
    {
      schema: {
        tags: ['reports'],
        summary: 'Report the outcome of a call to an MCP server (free)',
        description:
          'Acknowledged (202) only once stored. An unknown server_url becomes a tracked server (public http(s) targets only). Scores fold the report in within seconds.',
        body: reportSchema,
      },
    },
    async (request, reply) => {
      const receipt = await services.reports.ingest(request.body, {});
      return reply.status(202).send({
        ...receipt,
        message: 'Report stored; the trust score will reflect it within seconds.',
      });
    },
  );
}
