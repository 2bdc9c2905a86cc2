import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { isUnavailable } from '../src/plugins/problem-details.ts';

/**
 * While the database watchdog says Postgres is away, routes that need it refuse at once with a
 * retryable 503; the process's own probes and static documents still answer. The watchdog
 * itself is tested in packages/db/test/availability.test.ts, a real outage in
 * test/faults/postgres-restart.fault.ts; here its verdict is switched by hand.
 */
describe('database gate', () => {
  let runtime: TestRuntime;
  let app: FastifyInstance;
  let databaseAway = false;
  beforeAll(async () => {
    runtime = await createTestRuntime();
    runtime.db.available = () => !databaseAway;
    app = await buildApp(runtime, { logRequests: false });
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('refuses routes that need the database with a 503 problem and Retry-After', async () => {
    databaseAway = true;
    try {
      for (const url of ['/api/trust?url=https%3A%2F%2Fexample.com%2Fmcp', '/api/stats', '/servers']) {
        const res = await app.inject({ url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.headers['retry-after']).toBe('2');
        expect(res.json()).toMatchObject({ status: 503, retry_after: 2 });
      }
      const report = await app.inject({
        method: 'POST',
        url: '/api/report',
        payload: { server_url: 'https://example.com/mcp', success: true },
      });
      expect(report.statusCode).toBe(503);
    } finally {
      databaseAway = false;
    }
  });

  it('keeps answering health, documents and unknown routes while the database is away', async () => {
    databaseAway = true;
    try {
      expect((await app.inject({ url: '/health' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/openapi.json' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/agent-onboarding/SKILL.md' })).statusCode).toBe(200);
      expect((await app.inject({ url: '/no/such/thing' })).statusCode).toBe(404);
    } finally {
      databaseAway = false;
    }
    expect((await app.inject({ url: '/api/stats' })).statusCode).toBe(200);
  });

  it('counts deadlock and serialization victims, timeouts and outages as retryable', () => {
    for (const code of ['40P01', '40001', '53300', '57014', '57P01', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE'])
      expect(isUnavailable(Object.assign(new Error('x'), { code })), code).toBe(true);
    for (const code of ['23505', '22P02', undefined])
      expect(isUnavailable(Object.assign(new Error('x'), { code })), String(code)).toBe(false);
  });
});
