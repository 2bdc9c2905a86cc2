import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';

describe.each(['postgres', 'embedded'] as const)('API foundation (%s)', (database) => {
  let runtime: TestRuntime;
  let app: FastifyInstance;
  beforeAll(async () => {
    runtime = await createTestRuntime({ database, env: { OPERATOR: 'Test Operator', REGION: 'eu-test' } });
    app = await buildApp(runtime, { logRequests: false });
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('describes itself at /api/info with every SPEC §1 field', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/info' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      name: 'MCP Trust Observatory',
      version: '1.0.0',
      operator: 'Test Operator',
      region: 'eu-test',
    });
    expect(typeof body.description).toBe('string');
    expect(body.data_since).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body.endpoints.agent_query).toContain('/agent-query/');
    expect(body.tools).toHaveLength(10);
    expect(body.tools).toContain('check_trust');
  });

  it('answers /health and /ready', async () => {
    expect((await app.inject({ url: '/health' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().checks.database).toBe('ok');
  });

  it('answers unknown routes with a problem+json 404', async () => {
    const res = await app.inject({ url: '/no/such/thing?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 404, title: 'Not Found', instance: '/no/such/thing' });
  });
});

describe('/ready in distributed mode', () => {
  it('answers 503 when Redis is unreachable, naming the failed check', async () => {
    const runtime = await createTestRuntime({ redis: 'redis://127.0.0.1:1' });
    const app = await buildApp(runtime, { logRequests: false });
    try {
      const res = await app.inject({ url: '/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().checks).toEqual({ database: 'ok', redis: 'unavailable' });
    } finally {
      await app.close();
      await runtime.close();
    }
  });

  it('answers 200 when Redis and Postgres are up', async () => {
    const runtime = await createTestRuntime({ redis: true });
    const app = await buildApp(runtime, { logRequests: false });
    try {
      const res = await app.inject({ url: '/ready' });
      expect(res.statusCode).toBe(200);
      expect(res.json().checks).toEqual({ database: 'ok', redis: 'ok' });
    } finally {
      await app.close();
      await runtime.close();
    }
  });
});
