import type { Runtime } from '@observatory/service';
import type { FastifyInstance } from 'fastify';
import { sendProblem, unavailableProblem } from './problem-details.ts';

/** Routes answered without the database: probes of the process itself and static documents. */
const ANSWERED_WITHOUT_DATABASE = [
  '/health',
  '/ready',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/.well-known/oauth-',
  '/agent-onboarding/',
  '/get-started',
  '/assets/',
  '/favicon.svg',
  '/problems/',
];

/**
 * While the database watchdog finds Postgres away, every route that needs it answers a 503
 * problem at once. Without this gate postgres.js would queue the request's queries until
 * Postgres came back, and clients would see requests hang for the whole outage instead of a
 * refusal they can retry (tested in test/faults/postgres-restart.fault.ts).
 */
export function registerDatabaseGate(app: FastifyInstance, runtime: Runtime) {
  app.addHook('onRequest', async (request, reply) => {
    if (runtime.db.available()) return;
    const route = request.routeOptions.url;
    // unknown routes fall through to the 404 handler
    if (route === undefined || ANSWERED_WITHOUT_DATABASE.some((p) => route.startsWith(p))) return;
    return sendProblem(reply, request, unavailableProblem('The database is unavailable; retry shortly.', 2));
  });
}
