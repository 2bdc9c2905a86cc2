import { HttpProblem } from '@observatory/service';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

const PROBLEM_TYPE = 'application/problem+json; charset=utf-8';

export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: HttpProblem) {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value);
  return reply
    .status(problem.status)
    .type(PROBLEM_TYPE)
    .send(problem.toJSON(request.url.split('?')[0]));
}

/** A retryable 503: the answer carries Retry-After (header and member) so clients back off. */
export function unavailableProblem(detail: string, retryAfterSeconds: number): HttpProblem {
  return new HttpProblem(
    503,
    'Service Unavailable',
    detail,
    { retry_after: retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds) },
  );
}

/**
 * One error handler for the whole API: every error leaves as RFC 9457 problem+json. Validation
 * errors list each bad field; errors Fastify raises on purpose (bad JSON, body too large, wrong
 * content type) keep their 4xx status; anything else is a 500 whose body says nothing about
 * internals (the log has the details).
 */
export function registerProblemDetails(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | HttpProblem | Error, request, reply) => {
    if (error instanceof HttpProblem) return sendProblem(reply, request, error);

    if (hasZodFastifySchemaValidationErrors(error)) {
      const errors = error.validation.map((v) => ({
        field: [error.validationContext, ...String(v.instancePath).split('/').filter(Boolean)].join('.'),
        message: v.message ?? 'is invalid',
      }));
      return sendProblem(
        reply,
        request,
        new HttpProblem(
          400,
          'Bad Request',
          errors
            .map((e) => `${e.field}: ${e.message}`)
            .join('; ')
            .slice(0, 500),
          {
            errors,
          },
        ),
      );
    }

    const fastifyError = error as FastifyError;
    const status = fastifyError.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const title =
        status === 413
          ? 'Payload Too Large'
          : status === 415
            ? 'Unsupported Media Type'
            : status === 429
              ? 'Too Many Requests'
              : 'Bad Request';
      return sendProblem(reply, request, new HttpProblem(status, title, fastifyError.message.slice(0, 300)));
    }

    // Database or Redis away: a clear, retryable 503 instead of a crash or a bare 500.
    if (isUnavailable(error)) {
      request.log.warn({ err: error }, 'dependency unavailable');
      return sendProblem(
        reply,
        request,
        unavailableProblem('A storage dependency is unavailable; retry shortly.', 5),
      );
    }

    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(
      reply,
      request,
      new HttpProblem(500, 'Internal Server Error', 'Something went wrong on our side; it has been logged.'),
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      request,
      new HttpProblem(404, 'Not Found', `No route for ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  // a write to a connection Postgres has just dropped (seen when it crashed under load)
  'EPIPE',
  'ETIMEDOUT',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01',
  '57P03',
  '08006',
  '08001',
  '08003',
  // a deadlock or serialization victim, too many connections, a statement timeout: the same
  // request is expected to succeed on retry
  '40P01',
  '40001',
  '53300',
  '57014',
]);

/** Errors that mean "a dependency is away or refused this once": a retryable 503. */
export function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  const message = (error as Error).message ?? '';
  return /Redis is not reachable|Connection is closed|Stream isn't writeable/.test(message);
}

/**
 * Errors Fastify raises before any route runs (a path that is not valid UTF-8 percent-encoding,
 * an over-long URL): the same problem+json as everything else.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status =
    error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const title = status === 414 ? 'URI Too Long' : 'Bad Request';
  return sendProblem(reply, request, new HttpProblem(status, title, error.message.slice(0, 300)));
}
