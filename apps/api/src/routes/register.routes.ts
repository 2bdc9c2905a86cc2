import { registerSchema, type Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';

export function registerRoutes(app: FastifyInstance, services: Services) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/register',
    {
      schema: {
        tags: ['servers'],
        summary: 'Register an MCP server so it is probed and builds a trust score (free)',
        description:
          'Deduplicated by normalized URL: registering again updates the details (updated: true). Refuses non-public targets and the observatory itself. The first probe runs at once.',
        body: registerSchema,
      },
    },
    async (request, reply) => {
      const result = await services.registration.register(request.body);
      return reply.status(result.updated ? 200 : 201).send(result);
    },
  );
}
