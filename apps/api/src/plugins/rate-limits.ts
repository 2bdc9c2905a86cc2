import rateLimit from '@fastify/rate-limit';
import { HttpProblem, type Runtime } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

/**
 * Rate limits, shared across API replicas through Redis in distributed mode (in memory
 * otherwise). Not global: routes opt in with `config.rateLimit`. If Redis is away the limit is
 * skipped rather than failing the request.
 */
export async function registerRateLimits(app: FastifyInstance, runtime: Runtime) {
  await app.register(rateLimit, {
    global: false,
    ...(runtime.redis
      ? { redis: runtime.redis, nameSpace: `${runtime.config.QUEUE_PREFIX}:ratelimit:` }
      : {}),
    skipOnError: true,
    // count only requests that got past validation: a malformed call is not a registration
    hook: 'preHandler',
    errorResponseBuilder: (_request, context) =>
      new HttpProblem(
        429,
        'Too Many Requests',
        `Limit of ${context.max} per ${context.after === '1 hour' ? 'hour' : 'window'} reached; retry in ${context.after}.`,
        { retry_after: Math.ceil(context.ttl / 1000) },
        { 'retry-after': String(Math.ceil(context.ttl / 1000)) },
      ),
  });
}
