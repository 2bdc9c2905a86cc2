import { type Runtime, serviceInfo } from '@observatory/service';
import type { FastifyInstance } from 'fastify';

export function infoRoutes(app: FastifyInstance, runtime: Runtime) {
  app.get(
    '/api/info',
    { schema: { tags: ['service'], summary: 'Service description (SPEC §1)' } },
    async () => serviceInfo(runtime),
  );
}
