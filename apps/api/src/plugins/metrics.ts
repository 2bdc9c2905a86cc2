import { createScrapeRegistry, type Services } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

/**
 * GET /metrics in Prometheus text, and a duration for every API response. Routes are labelled
 * by their pattern (`/servers/:slug`, not each slug) and unmatched URLs share one label, so a
 * crawler cannot blow up the series count. Register before the routes.
 */
export function registerMetrics(app: FastifyInstance, services: Services) {
  const metrics = createScrapeRegistry(services.runtime, {
    reportBufferDepth: () => services.reports.bufferDepth,
  });

  // a callback hook, not an async one: it runs on every response, and a promise and a
  // microtask per request for a synchronous observe() were measurable on the busiest routes
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequestDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
    done();
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header('cache-control', 'no-store')
      .type(metrics.contentType)
      .send(await metrics.render()),
  );
}
