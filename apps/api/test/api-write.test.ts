import { CATEGORIES } from '@observatory/core';
import { REPORT_ERROR_TYPES } from '@observatory/service';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, countRows, expectProblem, MODES, startApi } from './api-harness.ts';

/**
 * The write side: POST /api/report (SPEC 2.5) and POST /api/register (SPEC 2.6) — validation,
 * durability of what is acknowledged, deduplication, and refusal of targets the observatory
 * must never probe.
 */

const PUBLIC_BASE_URL = 'https://observatory.test';
/** The SPEC 2.7 categories (ours add "other" for servers nobody categorised). */
const SPEC_CATEGORIES = [
  'weather',
  'finance',
  'code',
  'data',
  'search',
  'compliance',
  'transport',
  'productivity',
  'communication',
];

type Body = Record<string, unknown>;

describe.each(MODES)('public write API ($mode)', ({ options }) => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi({ ...options, env: { PUBLIC_BASE_URL } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const post = (url: string, payload: Body | string) => h.app.inject({ method: 'POST', url, payload });
  const serverRow = async (url: string) => {
    const [row] = await h.runtime.db.sql<
      {
        id: number;
        source: string;
        category: string;
        name: string;
        description: string | null;
        due: boolean;
      }[]
    >`SELECT id, source, category, name, description, next_probe_at <= now() AS due FROM servers WHERE url = ${url}`;
    return row;
  };

  describe('POST /api/report', () => {
    const report = (extra: Body = {}) =>
      post('/api/report', { server_url: 'https://a.example.com/mcp', success: true, ...extra });

    it('acknowledges with 202 only once the row is stored', async () => {
      const res = await report({ latency_ms: 12.5, tool_name: 'search', http_status: 200 });
      expect(res.statusCode).toBe(202);
      const body = res.json();
      expect(body).toMatchObject({
        recorded: true,
        server_url: 'https://a.example.com/mcp',
        message: expect.any(String),
      });
      // no drain, no wait: the acknowledgement itself means stored
      const [row] = await h.runtime.db.sql`
        SELECT agent_id, success, latency_ms, tool_name, http_status, error_type
        FROM interaction_reports WHERE report_id = ${body.report_id}`;
      expect(row).toEqual({
        agent_id: 'anonymous',
        success: true,
        latency_ms: 12.5,
        tool_name: 'search',
        http_status: 200,
        error_type: null,
      });
    });

    it('answers with every COMPAT.md field of the old reply', async () => {
      const body = (await report()).json();
      expect(body).toMatchObject({
        recorded: true,
        server_url: expect.any(String),
        message: expect.any(String),
      });
      expect(body).toHaveProperty('new_trust_score');
      expect(body.total_interactions).toEqual(expect.any(Number));
      expect(body).toHaveProperty('success_rate');
    });

    it('stores every one of 200 concurrent reports it acknowledged', async () => {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          report({ server_url: `https://burst-${i % 7}.example.com/mcp`, success: i % 3 > 0, latency_ms: i }),
        ),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(200).fill(202));
      const ids = answers.map((a) => a.json().report_id as string);
      expect(new Set(ids).size).toBe(200);
      const [counted] = await h.runtime.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM interaction_reports WHERE report_id = ANY(${ids}::text[])`;
      expect(counted?.n).toBe(200);
    });

    it('turns an unknown server_url into a tracked server with source "reported"', async () => {
      const res = await report({ server_url: 'HTTPS://New-Server.example.org:443/mcp#frag' });
      expect(res.statusCode).toBe(202);
      expect(res.json()).toMatchObject({
        server_url: 'https://new-server.example.org/mcp',
        server_created: true,
      });
      expect(await serverRow('https://new-server.example.org/mcp')).toMatchObject({
        source: 'reported',
        category: 'other',
      });
      // the second report about it finds it
      expect((await report({ server_url: 'https://new-server.example.org/mcp' })).json().server_created).toBe(
        false,
      );
    });

    it.each([
      { latency_ms: 0 },
      { latency_ms: 600_000 },
      { http_status: 100 },
      { http_status: 599 },
      { tool_name: 't'.repeat(200) },
      { error_message: 'e'.repeat(1000) },
      { agent_id: 'a'.repeat(128) },
      { tool_name: 'بحث', error_message: 'line one\nline two\t(tab) — ünïcødé 🚀' },
      ...REPORT_ERROR_TYPES.map((error_type) => ({ success: false, error_type })),
    ])('accepts the boundary %j', async (extra) => {
      expect((await report(extra)).statusCode).toBe(202);
    });

    it.each([
      ['latency_ms', { latency_ms: -1 }],
      ['latency_ms', { latency_ms: 600_001 }],
      ['latency_ms', { latency_ms: '12' }],
      ['http_status', { http_status: 99 }],
      ['http_status', { http_status: 600 }],
      ['http_status', { http_status: 200.5 }],
      ['http_status', { http_status: '200' }],
      ['success', { success: 'true' }],
      ['success', { success: 1 }],
      ['success', { success: null }],
      ['success', { success: undefined }],
      ['server_url', { server_url: undefined }],
      ['server_url', { server_url: 'ftp://files.example.com/mcp' }],
      ['server_url', { server_url: `https://example.com/${'p'.repeat(2048)}` }],
      ['server_url', { server_url: 42 }],
      ['tool_name', { tool_name: 't'.repeat(201) }],
      ['tool_name', { tool_name: 'nul\u0000byte' }],
      ['error_type', { error_type: 'bogus' }],
      ['error_message', { error_message: 'e'.repeat(1001) }],
      ['agent_id', { agent_id: '' }],
      ['agent_id', { agent_id: 'a'.repeat(129) }],
    ])('refuses a bad %s (%j) with 400 naming the field', async (field, extra) => {
      const before = await countRows(h, 'interaction_reports');
      const problem = expectProblem(await report(extra), 400);
      const errors = problem.errors as Array<{ field: string; message: string }>;
      expect(errors.map((e) => e.field)).toContain(`body.${field}`);
      expect(await countRows(h, 'interaction_reports')).toBe(before);
    });

    it('names the documented error types when error_type is unknown', async () => {
      const problem = expectProblem(await report({ error_type: 'cosmic_rays' }), 400);
      for (const t of REPORT_ERROR_TYPES) expect(problem.detail).toContain(t);
    });

    it('refuses a server_url that is no URL at all with 400', async () => {
      for (const server_url of ['not a url', '', 'example.com/mcp', 'http://']) {
        const problem = expectProblem(await report({ server_url }), 400);
        expect((problem.errors as Array<{ field: string }>).map((e) => e.field)).toContain('body.server_url');
      }
    });
  });

  describe('POST /api/register', () => {
    const register = (body: Body) => post('/api/register', body);

    it('registers a server (201), normalized, in its category, due for a probe at once', async () => {
      const res = await register({
        server_url: 'https://Weather.Example.com:443/mcp',
        name: 'Acme Weather',
        description: 'Forecasts',
        category: 'Weather',
        github_url: 'https://github.com/acme/weather-mcp',
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({
        registered: true,
        updated: false,
        server_url: 'https://weather.example.com/mcp',
        initial_trust_score: null,
        category: 'weather',
        message: expect.any(String),
      });
      expect(await serverRow('https://weather.example.com/mcp')).toMatchObject({
        source: 'registered',
        category: 'weather',
        due: true,
      });
    });

    it('deduplicates by normalized URL: a second registration updates (200, updated:true) and is due again', async () => {
      const first = await register({ server_url: 'https://dedupe.example.com/mcp', name: 'First name' });
      expect(first.statusCode).toBe(201);
      await h.runtime.db.sql`
        UPDATE servers SET next_probe_at = now() + interval '1 hour' WHERE url = 'https://dedupe.example.com/mcp'`;
      const again = await register({
        server_url: 'HTTPS://DEDUPE.example.com/mcp#readme',
        name: 'Second name',
        description: 'now with a description',
        category: 'search',
      });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({
        registered: true,
        updated: true,
        server_url: 'https://dedupe.example.com/mcp',
      });
      const [counted] = await h.runtime.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM servers WHERE lower(url) = 'https://dedupe.example.com/mcp'`;
      expect(counted?.n).toBe(1);
      expect(await serverRow('https://dedupe.example.com/mcp')).toMatchObject({
        name: 'Second name',
        description: 'now with a description',
        category: 'search',
        due: true,
      });
    });

    it('upgrades a server first known from reports to "registered"', async () => {
      expect(
        (await post('/api/report', { server_url: 'https://upgrade.example.com/mcp', success: true }))
          .statusCode,
      ).toBe(202);
      const res = await register({
        server_url: 'https://upgrade.example.com/mcp',
        name: 'Upgraded',
        category: 'code',
      });
      expect(res.json()).toMatchObject({ updated: true });
      expect(await serverRow('https://upgrade.example.com/mcp')).toMatchObject({
        source: 'registered',
        name: 'Upgraded',
        category: 'code',
      });
    });

    it.each(SPEC_CATEGORIES)('accepts the SPEC category %s', async (category) => {
      const res = await register({
        server_url: `https://${category}.example.net/mcp`,
        name: category,
        category,
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().category).toBe(category);
    });

    it('refuses an unknown category with 400 listing the allowed ones', async () => {
      const problem = expectProblem(
        await register({ server_url: 'https://c.example.com/mcp', name: 'c', category: 'gossip' }),
        400,
      );
      for (const c of CATEGORIES) expect(problem.detail).toContain(c);
    });

    it.each([
      ['name', { name: undefined }],
      ['name', { name: '' }],
      ['name', { name: '   ' }],
      ['name', { name: 'n'.repeat(121) }],
      ['name', { name: 7 }],
      ['description', { description: 'd'.repeat(2001) }],
      ['github_url', { github_url: 'http://github.com/acme/x' }],
      ['github_url', { github_url: 'javascript:alert(1)' }],
      ['server_url', { server_url: undefined }],
      ['server_url', { server_url: 'file:///etc/passwd' }],
      ['server_url', { server_url: ['https://a.example.com'] }],
    ])('refuses a bad %s (%j) with 400 naming the field', async (field, extra) => {
      const before = await countRows(h, 'servers');
      const problem = expectProblem(
        await register({ server_url: 'https://valid.example.com/mcp', name: 'Valid', ...extra }),
        400,
      );
      expect((problem.errors as Array<{ field: string }>).map((e) => e.field)).toContain(`body.${field}`);
      expect(await countRows(h, 'servers')).toBe(before);
    });

    it('refuses a server_url that is no URL at all with 400', async () => {
      expectProblem(await register({ server_url: 'not a url', name: 'x' }), 400);
    });

    it('refuses to register the observatory itself', async () => {
      for (const server_url of [`${PUBLIC_BASE_URL}/mcp`, 'HTTPS://OBSERVATORY.test:443/anything']) {
        const problem = expectProblem(await register({ server_url, name: 'Me' }), 422);
        expect(problem.reason_code).toBe('self_registration');
      }
      expect(await serverRow(`${PUBLIC_BASE_URL}/mcp`)).toBeUndefined();
    });
  });
});

/**
 * With PROBE_ALLOW_PRIVATE_NETWORKS=false (production), neither a report nor a registration may
 * make the observatory point its prober at a non-public address. Storage plays no part in this
 * refusal, so one mode is enough. Every target is an address literal or "localhost": no DNS.
 */
describe('non-public targets are refused (PROBE_ALLOW_PRIVATE_NETWORKS=false)', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await startApi({ database: 'postgres', env: { PROBE_ALLOW_PRIVATE_NETWORKS: 'false' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const targets = [
    'http://127.0.0.1:8080/mcp',
    'http://localhost:3000/mcp',
    'http://10.0.0.5/mcp',
    'http://192.168.1.1/mcp',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/mcp',
    'http://[fd00::1]/mcp',
    'http://0.0.0.0/mcp',
    'http://2130706433/mcp', // 127.0.0.1 written as one number
    'http://[::ffff:127.0.0.1]/mcp',
  ];

  it.each(targets)('refuses %s on /api/report and /api/register, storing nothing', async (target) => {
    const report = await h.app.inject({
      method: 'POST',
      url: '/api/report',
      payload: { server_url: target, success: true },
    });
    const register = await h.app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { server_url: target, name: 'x' },
    });
    for (const res of [report, register]) {
      const problem = expectProblem(res, res.statusCode);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect((problem.errors as Array<{ field: string }>).map((e) => e.field)).toContain('server_url');
    }
    expect(await countRows(h, 'servers')).toBe(0);
    expect(await countRows(h, 'interaction_reports')).toBe(0);
  });
});
