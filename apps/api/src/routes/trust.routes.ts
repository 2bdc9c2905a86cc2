import { boundedText, type Services, serverUrlSchema } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const serverIdentifier = boundedText(2048).min(1, {
  error: 'name the server: its URL (URL-encoded), slug or name',
});

export function trustRoutes(app: FastifyInstance, services: Services) {
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.get(
    '/api/trust',
    {
      schema: {
        tags: ['trust'],
        summary: 'Trust score (0-100), verdict and reliability metrics of a server',
        description:
          'Scores above 70 indicate reliable servers, below 30 risky ones. An untracked server answers 200 with found:false and trust_score null.',
        querystring: z.object({ url: serverUrlSchema }),
      },
    },
    async (request) => services.trust.checkTrust(request.query.url),
  );

  api.get(
    '/agent-query/*',
    {
      schema: {
        tags: ['agents'],
        summary: 'Verdict (PASS / UNCERTAIN / FAIL) on a server, with a signed receipt',
        description:
          "Needs Authorization: Bearer <api_key> (POST /agent/auth). Uses one of the key's checks. The path is the server's URL (URL-encoded), slug or name.",
        params: z.object({ '*': serverIdentifier }),
        security: [{ bearerAuth: [] }],
      },
    },
    async (request, reply) => {
      const answer = await services.trust.agentQuery(request.params['*'], request.headers.authorization);
      return reply.header('cache-control', 'no-store').send(answer);
    },
  );
}
