import type { Runtime } from '@observatory/service';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { registerProblemDetails } from './plugins/problem-details.ts';
import { healthRoutes } from './routes/health.routes.ts';
import { infoRoutes } from './routes/info.routes.ts';

export interface BuildAppOptions {
  /** Fastify logs requests through the runtime's pino logger unless this is false. */
  logRequests?: boolean;
}

/** The HTTP application, without listening: tests drive it with `inject`, the server listens. */
export async function buildApp(runtime: Runtime, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: runtime.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: options.logRequests === false }),
    trustProxy: runtime.config.TRUST_PROXY,
    bodyLimit: 64 * 1024,
    // Deep or odd input must never crash a handler: bodies are parsed by Fastify's secure JSON
    // parser (prototype poisoning refused) and then validated by zod.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerProblemDetails(app);

  healthRoutes(app, runtime);
  infoRoutes(app, runtime);

  await app.ready();
  return app;
}
