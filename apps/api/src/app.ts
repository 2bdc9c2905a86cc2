import { createServices, type Runtime, type Services } from '@observatory/service';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { mcpRoutes } from './mcp/mcp.routes.ts';
import { badgeRoutes } from './pages/badge.routes.ts';
import { pagesRoutes } from './pages/pages.routes.ts';
import { registerDatabaseGate } from './plugins/database-gate.ts';
import { registerInputGuard } from './plugins/input-guard.ts';
import { registerMetrics } from './plugins/metrics.ts';
import { registerOpenApi } from './plugins/openapi.ts';
import { frameworkErrors, registerProblemDetails } from './plugins/problem-details.ts';
import { registerRateLimits } from './plugins/rate-limits.ts';
import { agentAuthRoutes } from './routes/agent-auth.routes.ts';
import { atlasRoutes } from './routes/atlas.routes.ts';
import { complianceRoutes } from './routes/compliance.routes.ts';
import { directoryRoutes } from './routes/directory.routes.ts';
import { discoveryRoutes } from './routes/discovery.routes.ts';
import { healthRoutes } from './routes/health.routes.ts';
import { infoRoutes } from './routes/info.routes.ts';
import { receiptRoutes } from './routes/receipts.routes.ts';
import { registerRoutes } from './routes/register.routes.ts';
import { reportRoutes } from './routes/report.routes.ts';
import { trustRoutes } from './routes/trust.routes.ts';

export interface BuildAppOptions {
  /** Fastify logs requests through the runtime's pino logger unless this is false. */
  logRequests?: boolean;
  /** The service layer; made from the runtime when not given (tests may share one). */
  services?: Services;
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
    frameworkErrors,
  });
  // JSON only: a text/plain body is refused with 415 instead of reaching a JSON schema as a string.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerProblemDetails(app);
  registerDatabaseGate(app, runtime);
  registerInputGuard(app);
  await registerRateLimits(app, runtime);
  await registerOpenApi(app, runtime);
  const services = options.services ?? (await createServices(runtime));
  registerMetrics(app, services);

  healthRoutes(app, runtime);
  infoRoutes(app, runtime);
  agentAuthRoutes(app, services);
  reportRoutes(app, services);
  registerRoutes(app, services);
  trustRoutes(app, services);
  directoryRoutes(app, services);
  receiptRoutes(app, services);
  discoveryRoutes(app, runtime);
  atlasRoutes(app, services);
  complianceRoutes(app, services);
  await mcpRoutes(app, services);
  pagesRoutes(app, services);
  badgeRoutes(app, services);

  await app.ready();
  return app;
}
