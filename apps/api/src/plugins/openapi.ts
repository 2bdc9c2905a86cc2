import swagger, { type SwaggerTransform } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { type Runtime, SERVICE_NAME, SERVICE_VERSION } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

/** OpenAPI 3.1 generated from the routes' zod schemas, at /openapi.json, rendered at /docs. */
export async function registerOpenApi(app: FastifyInstance, runtime: Runtime) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: SERVICE_NAME,
        version: SERVICE_VERSION,
        description: 'Runtime trust verdicts, liveness measurements and signed receipts for MCP servers.',
      },
      servers: [{ url: runtime.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key from POST /agent/auth' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/**
 * For a route ending in a wildcard, which takes a value with its slashes (a server URL): the
 * OpenAPI path names the parameter (`/agent-query/{server}`) instead of showing `{*}`. Set as the
 * route's `config.swaggerTransform`; everything else is jsonSchemaTransform's.
 */
export function namedWildcard(name: string): SwaggerTransform {
  return (input) => {
    const { schema, url } = jsonSchemaTransform(input as Parameters<typeof jsonSchemaTransform>[0]);
    const params = (schema as { params?: { properties?: Record<string, unknown>; required?: string[] } })
      .params;
    if (!url.endsWith('/*') || !params?.properties || !('*' in params.properties)) return { schema, url };
    const { '*': wildcard, ...properties } = params.properties;
    return {
      schema: {
        ...schema,
        params: {
          ...params,
          properties: { ...properties, [name]: wildcard },
          required: params.required?.map((p) => (p === '*' ? name : p)),
        },
      },
      url: `${url.slice(0, -1)}:${name}`,
    };
  };
}
