import { boundedText, type Services, serverUrlSchema } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import type { FastifyRouteSchemaDef, FastifyValidationResult } from 'fastify/types/schema.js';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { type ZodType, z } from 'zod';
import { namedWildcard } from '../plugins/openapi.ts';

const serverIdentifier = boundedText(2048)
  .min(1, { error: 'name the server: its URL (URL-encoded), slug or name' })
  .describe("The server's URL (URL-encoded), slug or name");

/**
 * The check of a request part that is one text field — /api/trust's querystring `url`,
 * /agent-query's path — by its zod schema as everywhere, remembering the texts it accepted: the
 * same popular servers are asked about thousands of times a second, and the schema's trim and
 * checks (two URL parses for a URL) cost more than sending the ready answer. Only a lone string
 * `field` is remembered (the accepted, trimmed value), at most ACCEPTED_TEXTS of them; anything
 * else, and every refusal, goes through zod each time.
 */
function rememberingAccepted(part: 'querystring' | 'params', field: string) {
  return <S>(route: FastifyRouteSchemaDef<S>): FastifyValidationResult => {
    const validate = validatorCompiler(route as unknown as FastifyRouteSchemaDef<ZodType>);
    if (route.httpPart !== part) return validate;
    const accepted = new Map<string, string>();
    return (data) => {
      const input = data as Record<string, unknown>;
      const raw = input[field];
      if (typeof raw !== 'string') return validate(data);
      let keys = 0;
      for (const _ in input) keys++;
      if (keys !== 1) return validate(data);
      const value = accepted.get(raw);
      if (value !== undefined) return { value: { [field]: value } };
      const result = validate(data) as { value?: Record<string, string> };
      if (result.value) {
        if (accepted.size >= ACCEPTED_TEXTS) accepted.delete(accepted.keys().next().value as string);
        accepted.set(raw, result.value[field]!);
      }
      return result;
    };
  };
}
const ACCEPTED_TEXTS = 10_000;

/** What Fastify sends a serialized object as. */
const JSON_TYPE = 'application/json; charset=utf-8';

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
      validatorCompiler: rememberingAccepted('querystring', 'url'),
    },
    // The answer comes with its JSON text (shared by every ask within a second): sent as it
    // is, and at once when it is ready (no promise to wait on: this is the busiest route).
    (request, reply) => {
      const ready = services.trust.readyAnswer(request.query.url);
      if (ready) return reply.type(JSON_TYPE).send(ready.json);
      return services.trust
        .trustAnswer(request.query.url)
        .then((answer) => reply.type(JSON_TYPE).send(answer.json));
    },
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
      // documented as /agent-query/{server}: the wildcard takes URLs with their slashes too
      config: { swaggerTransform: namedWildcard('server') },
      validatorCompiler: rememberingAccepted('params', '*'),
    },
    // sent as the JSON text the service made with the answer (most of it once per server a second)
    async (request, reply) => {
      const answer = await services.trust.agentQuery(request.params['*'], request.headers.authorization);
      return reply.header('cache-control', 'no-store').type(JSON_TYPE).send(answer.json);
    },
  );
}
