import type { Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const authRequest = z.object({
  type: z.literal('anonymous', { error: 'must be "anonymous" (the only registration flow offered)' }),
  requested_credential_type: z.literal('api_key', { error: 'must be "api_key"' }),
});

const credential = z.object({
  api_key: z.string(),
  credential_type: z.literal('api_key'),
  scopes: z.array(z.string()),
  trial_limit: z.number().int(),
  credential_expires: z.null(),
});

export function agentAuthRoutes(app: FastifyInstance, services: Services) {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/agent/auth',
    {
      schema: {
        tags: ['agents'],
        summary: 'Get an anonymous API key (one call, no human step)',
        description:
          'Returns a key with scope trust:read and 50 free trust checks. Limited to 5 keys per hour per client address.',
        body: authRequest,
        response: { 201: credential },
      },
      config: { rateLimit: { max: 5, timeWindow: '1 hour' } },
    },
    async (request, reply) => {
      const issued = await services.agentKeys.issueAnonymousKey(request.ip);
      return reply.status(201).header('cache-control', 'no-store').send(issued);
    },
  );
}
