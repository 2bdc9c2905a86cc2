import { pingDatabase } from '@observatory/db';
import type { Runtime } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

export function healthRoutes(app: FastifyInstance, runtime: Runtime) {
  // Liveness: the process answers. Never touches dependencies, so a slow database can't get
  // the process killed.
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  // Readiness: the database answers, and Redis too when jobs go through it.
  app.get('/ready', { schema: { hide: true } }, async (_request, reply) => {
    const [database, redis] = await Promise.all([
      pingDatabase(runtime.db.sql),
      runtime.queue.kind === 'bullmq' ? runtime.queue.ping() : Promise.resolve(true),
    ]);
    const checks = {
      database: database ? 'ok' : 'unavailable',
      ...(runtime.queue.kind === 'bullmq' ? { redis: redis ? 'ok' : 'unavailable' } : {}),
    };
    if (database && redis) return { status: 'ready', checks };
    return reply.status(503).type('application/problem+json; charset=utf-8').header('retry-after', '5').send({
      type: '/problems/not-ready',
      title: 'Not Ready',
      status: 503,
      detail: 'A dependency is unavailable.',
      checks,
    });
  });
}
