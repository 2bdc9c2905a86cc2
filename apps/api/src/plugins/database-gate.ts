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
  // a callback hook, not an async one: it runs on every request and nearly always lets it pass
  // (a promise and a microtask per request for that were measurable on the busiest routes)
  app.addHook('onRequest', (request, reply, done) => {
    if (runtime.db.available()) return done();
    const route = request.routeOptions.url;
    // unknown routes fall through to the 404 handler
    if (route === undefined || ANSWERED_WITHOUT_DATABASE.some((p) => route.startsWith(p))) return done();
    // answered here: done() is not called, so the request goes no further
    sendProblem(reply, request, unavailableProblem('The database is unavailable; retry shortly.', 2));
  });
}
