import { REPORT_ERROR_TYPES } from '@observatory/service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { type ApiHarness, expectProblem, startApi } from './api-harness.ts';

/**
 * The documents agents read to find their way in: /api/info, the OAuth discovery metadata, the
 * JWKS, the onboarding skill, the pricing page, OpenAPI and its UI, and the health probes.
 * They are the same in both storage modes (foundation.test.ts checks /api/info and /ready in
 * each), so they are read once here, in distributed mode.
 */

const BASE = 'https://observatory.test';

describe('discovery documents', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi({ database: 'postgres', redis: true, env: { PUBLIC_BASE_URL: BASE } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ url, headers });

  describe('/api/info', () => {
    it('carries the SPEC §1 fields and version 1.0.0', async () => {
      const body = (await get('/api/info')).json();
      expect(body).toMatchObject({
        name: expect.any(String),
        version: '1.0.0',
        description: expect.any(String),
      });
      expect(body.data_since).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      for (const field of ['operator', 'region']) expect(body[field]).toEqual(expect.any(String));
      expect(body.tools).toEqual(
        expect.arrayContaining([
          'check_trust',
          'report_interaction',
          'get_leaderboard',
          'get_mica_attestation',
        ]),
      );
    });

    it('advertises only endpoints that exist', async () => {
      const endpoints = (await get('/api/info')).json().endpoints as Record<string, string>;
      const posts = new Set(['agent_auth', 'report', 'register']);
      for (const [name, url] of Object.entries(endpoints)) {
        expect(url.startsWith(BASE), name).toBe(true);
        const path = url
          .slice(BASE.length)
          .split('?')[0]!
          .replace(/\{[^}]+\}/g, 'example');
        const res = posts.has(name)
          ? await h.app.inject({ method: 'POST', url: path, payload: {}, remoteAddress: '198.51.100.70' })
          : await get(path);
        expect(res.statusCode, `${name}: ${path}`).not.toBe(404);
        expect(res.statusCode, `${name}: ${path}`).toBeLessThan(500);
      }
    });
  });

  describe('OAuth discovery and keys', () => {
    it('/.well-known/oauth-protected-resource describes this resource (RFC 9728)', async () => {
      const res = await get('/.well-known/oauth-protected-resource');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ resource: BASE, bearer_methods_supported: ['header'] });
      expect(body.authorization_servers).toContain(BASE);
      expect(body.scopes_supported).toContain('trust:read');
    });

    it('/.well-known/oauth-authorization-server names the issuer and the anonymous key flow that works (RFC 8414)', async () => {
      const body = (await get('/.well-known/oauth-authorization-server')).json();
      expect(body.issuer).toBe(BASE);
      expect(Array.isArray(body.response_types_supported)).toBe(true);
      expect(body.anonymous_key_endpoint).toBe(`${BASE}/agent/auth`);
      const issued = await h.app.inject({
        method: 'POST',
        url: new URL(body.anonymous_key_endpoint).pathname,
        payload: body.anonymous_key_request,
        remoteAddress: '198.51.100.71',
      });
      expect(issued.statusCode).toBe(201);
      expect(issued.json().trial_limit).toBe(body.anonymous_key_limits.trial_limit);
    });

    it('/.well-known/jwks.json publishes Ed25519 public keys and nothing private', async () => {
      const res = await get('/.well-known/jwks.json');
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toContain('public');
      const { keys } = res.json() as { keys: Array<Record<string, unknown>> };
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).toMatchObject({
          kty: 'OKP',
          crv: 'Ed25519',
          kid: expect.any(String),
          x: expect.any(String),
        });
        expect(key).not.toHaveProperty('d');
      }
    });
  });

  describe('onboarding and pricing', () => {
    it('/agent-onboarding/SKILL.md has YAML front matter with name and description', async () => {
      const res = await get('/agent-onboarding/SKILL.md');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/markdown/);
      const match = /^---\n([\s\S]+?)\n---\n/.exec(res.body);
      expect(match).not.toBeNull();
      const front = parseYaml(match![1]!) as { name?: unknown; description?: unknown };
      // Agent Skills: a lower-case hyphenated name, a description of at most 1024 characters
      expect(front.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(typeof front.description).toBe('string');
      expect((front.description as string).length).toBeGreaterThan(20);
      expect((front.description as string).length).toBeLessThanOrEqual(1024);
    });

    it('SKILL.md walks an agent through the real endpoints, with the documented error types', async () => {
      const body = (await get('/agent-onboarding/SKILL.md')).body;
      for (const path of [
        '/agent/auth',
        '/agent-query/',
        '/v1/verify-receipt',
        '/api/report',
        '/.well-known/jwks.json',
      ]) {
        expect(body).toContain(`${BASE}${path}`);
      }
      expect(body).toContain('{"type": "anonymous", "requested_credential_type": "api_key"}');
      for (const t of REPORT_ERROR_TYPES) expect(body).toContain(t);
    });

    it('/get-started gives pricing as JSON, and as HTML to a browser', async () => {
      const json = await get('/get-started');
      expect(json.statusCode).toBe(200);
      const plans = json.json().plans as Array<{ name: string; trust_checks: unknown }>;
      expect(plans.some((p) => p.trust_checks === 50)).toBe(true);
      const html = await get('/get-started', { accept: 'text/html' });
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.body).toContain('<h1>Get started</h1>');
    });
  });

  describe('OpenAPI and its UI', () => {
    it('/openapi.json is OpenAPI 3.1 and lists every SPEC endpoint', async () => {
      const spec = (await get('/openapi.json')).json();
      expect(spec.openapi).toMatch(/^3\.1\./);
      expect(spec.info.version).toBe('1.0.0');
      const listed = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(
        ([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
      );
      for (const route of [
        'POST /agent/auth',
        'GET /agent-query/{server}',
        'GET /v1/verify-receipt',
        'POST /v1/verify-receipt',
        'GET /api/trust',
        'GET /api/leaderboard',
        'GET /api/servers',
        'GET /api/stats',
        'GET /api/external-agents',
        'POST /api/report',
        'POST /api/register',
        'GET /api/info',
        'GET /atlas/report',
        'GET /get-started',
        'GET /agent-onboarding/SKILL.md',
        'GET /.well-known/oauth-protected-resource',
        'GET /.well-known/oauth-authorization-server',
        'GET /.well-known/jwks.json',
      ]) {
        expect(listed).toContain(route);
      }
      const agentQuery = spec.paths['/agent-query/{server}'].get;
      expect(agentQuery.security).toEqual([{ bearerAuth: [] }]);
      expect(agentQuery.parameters).toEqual([
        expect.objectContaining({ in: 'path', name: 'server', required: true }),
      ]);
      expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
      const report = spec.paths['/api/report'].post.requestBody.content['application/json'].schema;
      expect(report.required).toEqual(expect.arrayContaining(['server_url', 'success']));
      expect(report.properties.latency_ms).toMatchObject({ minimum: 0, maximum: 600_000 });
      expect(report.properties.http_status).toMatchObject({ minimum: 100, maximum: 599 });
    });

    it('/docs renders it', async () => {
      const res = await get('/docs');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('Swagger UI');
    });
  });

  describe('health', () => {
    it('/health answers without touching dependencies, /ready checks Postgres and Redis', async () => {
      expect((await get('/health')).json()).toEqual({ status: 'ok' });
      const ready = await get('/ready');
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
    });

    it('answers HEAD like GET, without a body', async () => {
      const res = await h.app.inject({ method: 'HEAD', url: '/api/info' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('');
    });

    it('answers a method a route does not have with a problem', async () => {
      const res = await h.app.inject({ method: 'DELETE', url: '/api/stats' });
      expect(res.statusCode).toBeGreaterThanOrEqual(404);
      expectProblem(res, res.statusCode);
    });
  });
});
