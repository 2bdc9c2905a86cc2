import { createPublicKey, type JsonWebKey, verify } from 'node:crypto';
import { CATEGORIES } from '@observatory/core';
import { analyzeDirty } from '@observatory/service';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiHarness,
  agentQueryPath,
  countRows,
  expectProblem,
  issueKey,
  MODES,
  probeServers,
  startApi,
} from './api-harness.ts';

/**
 * The read side of the public API over real data: servers of the testkit fleet registered through
 * the API and probed for real (probe job handler + analyzer), and agent reports sent through the
 * API. Field names are COMPAT.md's.
 */

const PROBES_EACH = 10;
const REPORTED_SERVERS = 50;
/** Healthy servers of category "data", so that more than 10 servers have a score. */
const DATA_SERVERS = 8;
const PROBED_SERVERS = 5 + DATA_SERVERS;
const TOTAL_SERVERS = PROBED_SERVERS + REPORTED_SERVERS;
/** Healthy servers answer MCP: they are "verifiable at runtime". */
const HEALTHY_SERVERS = 3 + DATA_SERVERS;

const decodeClaims = (jws: string) =>
  JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe.each(MODES)('public read API over real data ($mode)', ({ options }) => {
  let h: ApiHarness;
  let fleet: Fleet;
  /** Normalized URLs as the API returned them at registration. */
  const url = { healthy: '', peer: '', coder: '', html: '', dead: '' };
  let key: string;

  const get = (path: string, headers: Record<string, string> = {}) => h.app.inject({ url: path, headers });
  const query = (server: string) => get(agentQueryPath(server), { authorization: `Bearer ${key}` });

  beforeAll(async () => {
    fleet = await startFleet();
    h = await startApi(options);
    const register = async (serverUrl: string, name: string, category: string) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/register',
        payload: { server_url: serverUrl, name, category },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().server_url as string;
    };
    url.healthy = await register(fleet.add('healthy').url, 'Alpha Weather', 'weather');
    url.peer = await register(fleet.add('healthy').url, 'Beta Finance', 'finance');
    url.coder = await register(fleet.add('healthy').url, 'Epsilon Code', 'code');
    url.html = await register(fleet.add('html').url, 'Gamma Page', 'weather');
    url.dead = await register(await deadUrl(), 'Delta Gone', 'finance');
    const data: string[] = [];
    for (let i = 0; i < DATA_SERVERS; i++)
      data.push(await register(fleet.add('healthy').url, `Data ${i}`, 'data'));
    await probeServers(h, [...Object.values(url), ...data], PROBES_EACH);

    // agents report on the healthy server and on servers we only know from reports
    const report = (body: Record<string, unknown>) =>
      h.app.inject({ method: 'POST', url: '/api/report', payload: body }).then((r) => {
        expect(r.statusCode, r.body).toBe(202);
      });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        report({
          server_url: url.healthy,
          success: true,
          latency_ms: 40 + i,
          tool_name: `forecast-${i}`,
          agent_id: 'agent-a',
        }),
      ),
    );
    await Promise.all(
      Array.from({ length: REPORTED_SERVERS }, (_, i) =>
        report({
          server_url: `https://reported-${i}.example.org/mcp`,
          success: i % 4 !== 0,
          latency_ms: 100 + i,
          agent_id: i % 2 ? 'agent-b' : 'agent-c',
          tool_name: 'search',
          ...(i % 4 === 0 ? { error_type: 'timeout', error_message: 'took too long' } : {}),
        }),
      ),
    );
    // the analyzer's next pass, as the scheduler runs it every few seconds
    await analyzeDirty(h.runtime.db.sql);
    key = await issueKey(h.app, '198.51.100.40');
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await fleet?.close();
  });

  describe('GET /agent-query/<server>', () => {
    it('gives a measured verdict for a healthy server, by URL-encoded URL, with latency and a receipt', async () => {
      const res = await query(url.healthy);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({
        verdict: 'PASS',
        evidence: expect.stringMatching(/^probes_/),
        reason_code: 'healthy',
        server: { url: url.healthy, name: 'Alpha Weather', category: 'weather' },
      });
      expect(body.score).toBeGreaterThanOrEqual(70);
      expect(body.score).toBeLessThanOrEqual(100);
      expect(body.latency.p50_ms).toBeGreaterThan(0);
      expect(body.latency.p95_ms).toBeGreaterThanOrEqual(body.latency.p50_ms);
      expect(body.confidence).toBeGreaterThan(0);
      expect(body.confidence).toBeLessThanOrEqual(1);
      expect(Date.parse(body.checked_at)).not.toBeNaN();
      expect(body.receipt_id).toMatch(/^rcpt_/);
      // the receipt says what the answer said
      expect(decodeClaims(body.receipt)).toMatchObject({
        rid: body.receipt_id,
        sub: url.healthy,
        verdict: 'PASS',
        score: body.score,
        latency: body.latency,
      });
    });

    it('finds a server by its name and by its slug', async () => {
      for (const identifier of ['Alpha Weather', 'alpha-weather', 'ALPHA WEATHER']) {
        const body = (await query(identifier)).json();
        expect(body.server?.url, identifier).toBe(url.healthy);
        expect(body.verdict).toBe('PASS');
      }
    });

    it('fails a server that is not MCP and one that is gone', async () => {
      for (const server of [url.html, url.dead]) {
        const body = (await query(server)).json();
        expect(body.verdict, server).toBe('FAIL');
        expect(body.evidence).toBe('probes_only');
        expect(body.score === null || body.score < 70).toBe(true);
      }
    });

    it('checks the server in the path alike at every ask (accepted ones are remembered, refusals are not)', async () => {
      for (let ask = 0; ask < 2; ask++) {
        expectProblem(await query('bell\u0007'), 400);
        expectProblem(await query('   '), 400);
        const res = await query(`  ${url.healthy} `);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ server: { url: url.healthy }, verdict: 'PASS' });
      }
    });

    it('agrees with /api/trust about the same server', async () => {
      // Answers are shared for up to a second, and scores move with the clock: a /api/trust read
      // just before and one just after the query bracket it, so one of them saw what it saw
      // (comparing with one read alone failed when the second rolled over in between).
      const trustOf = async (server: string) => {
        const body = (await get(`/api/trust?url=${encodeURIComponent(server)}`)).json();
        return { verdict: body.verdict, score: body.trust_score };
      };
      for (const server of Object.values(url)) {
        const before = await trustOf(server);
        const answer = (await query(server)).json();
        const after = await trustOf(server);
        expect([before, after], server).toContainEqual({ verdict: answer.verdict, score: answer.score });
      }
    });
  });

  describe('/v1/verify-receipt', () => {
    let issued: { receipt_id: string; receipt: string };
    beforeAll(async () => {
      issued = (await query(url.html)).json();
    });

    it('verifies a receipt by id (GET ?id= and POST {receipt_id}) and by JWS (POST {jws})', async () => {
      const answers = [
        await get(`/v1/verify-receipt?id=${issued.receipt_id}`),
        await h.app.inject({
          method: 'POST',
          url: '/v1/verify-receipt',
          payload: { receipt_id: issued.receipt_id },
        }),
        await h.app.inject({ method: 'POST', url: '/v1/verify-receipt', payload: { jws: issued.receipt } }),
      ];
      for (const res of answers) {
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body).toMatchObject({
          valid: true,
          receipt: { rid: issued.receipt_id, sub: url.html, verdict: 'FAIL' },
          signature: { alg: 'EdDSA', valid: true },
          log: { included: true },
        });
        expect(body.log.index).toBeGreaterThanOrEqual(0);
        expect(body.log.checkpoint.tree_size).toBeGreaterThan(body.log.index);
      }
    });

    it('signs with a key published at /.well-known/jwks.json (checked offline)', async () => {
      const jwks = (await get('/.well-known/jwks.json')).json() as {
        keys: Array<JsonWebKey & { kid: string }>;
      };
      const [header, payload, signature] = issued.receipt.split('.') as [string, string, string];
      const { kid, alg } = JSON.parse(Buffer.from(header, 'base64url').toString());
      expect(alg).toBe('EdDSA');
      const jwk = jwks.keys.find((k) => k.kid === kid);
      expect(jwk).toBeDefined();
      const ok = verify(
        null,
        Buffer.from(`${header}.${payload}`),
        createPublicKey({ key: jwk!, format: 'jwk' }),
        Buffer.from(signature, 'base64url'),
      );
      expect(ok).toBe(true);
    });

    it('answers a tampered receipt with 200 valid:false and a reason', async () => {
      const [header, payload, signature] = issued.receipt.split('.') as [string, string, string];
      const upgraded = Buffer.from(
        JSON.stringify({ ...decodeClaims(issued.receipt), verdict: 'PASS', score: 99 }),
      ).toString('base64url');
      const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
      for (const jws of [`${header}.${upgraded}.${signature}`, `${header}.${payload}.${flipped}`]) {
        const res = await h.app.inject({ method: 'POST', url: '/v1/verify-receipt', payload: { jws } });
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body.valid).toBe(false);
        expect(body.reason).toEqual(expect.any(String));
        expect(body.signature.valid).toBe(false);
      }
    });

    it('answers an unknown receipt id with valid:false', async () => {
      for (const res of [
        await get('/v1/verify-receipt?id=rcpt_01J000000000000000000000ZZ'),
        await h.app.inject({
          method: 'POST',
          url: '/v1/verify-receipt',
          payload: { receipt_id: 'rcpt_01J000000000000000000000ZZ' },
        }),
      ]) {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ valid: false, reason: 'unknown_receipt' });
      }
    });
  });

  describe('GET /api/trust', () => {
    it('answers a tracked server with found:true and the COMPAT.md fields, measured over real windows', async () => {
      const res = await get(`/api/trust?url=${encodeURIComponent(url.healthy)}`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({
        found: true,
        server_url: url.healthy,
        name: 'Alpha Weather',
        category: 'weather',
        last_error: null,
        last_error_time: null,
      });
      expect(body.trust_score).toBeGreaterThanOrEqual(70);
      // ✗ in the old service: never filled in. Here they are measured.
      expect(body.metrics.avg_latency_ms).toBeGreaterThan(0);
      expect(body.metrics.p95_latency_ms).toBeGreaterThan(0);
      expect(body.metrics.uptime_30d).toBe(100);
      for (const field of ['total_calls', 'success_rate']) expect(body.metrics).toHaveProperty(field);
      for (const field of ['interactions', 'avg_latency_ms']) expect(body.recent_7d).toHaveProperty(field);
      for (const field of ['first_seen', 'last_checked']) expect(Date.parse(body[field])).not.toBeNaN();
    });

    it('finds a server under another spelling of its URL', async () => {
      const shouting = url.healthy.replace('http://127.0.0.1', 'HTTP://127.0.0.1');
      expect((await get(`/api/trust?url=${encodeURIComponent(shouting)}`)).json().found).toBe(true);
    });

    it('names the last error of a server that is gone', async () => {
      const body = (await get(`/api/trust?url=${encodeURIComponent(url.dead)}`)).json();
      expect(body.found).toBe(true);
      expect(body.last_error).toEqual(expect.any(String));
      expect(Date.parse(body.last_error_time)).not.toBeNaN();
      expect(body.metrics.uptime_30d).toBe(0);
    });

    it('answers an untracked server with 200 found:false and trust_score null', async () => {
      const res = await get('/api/trust?url=https%3A%2F%2Funknown.example.com%2Fmcp');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        found: false,
        server_url: 'https://unknown.example.com/mcp',
        trust_score: null,
        message: expect.any(String),
      });
    });

    it('needs url', async () => {
      expectProblem(await get('/api/trust'), 400);
    });

    it('checks url alike at every ask (the URLs it accepted are remembered, refusals are not)', async () => {
      const spaced = encodeURIComponent(`  ${url.healthy} `);
      for (let ask = 0; ask < 2; ask++) {
        expectProblem(await get('/api/trust?url=not-a-url'), 400);
        expectProblem(await get('/api/trust?url=ftp%3A%2F%2Fexample.com%2Fmcp'), 400);
        expectProblem(await get(`/api/trust?url=${spaced}&url=${spaced}`), 400);
        for (const path of [`/api/trust?url=${spaced}`, `/api/trust?url=${spaced}&other=1`]) {
          const res = await get(path);
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
          expect(res.json()).toMatchObject({ found: true, server_url: url.healthy });
        }
      }
    });
  });

  describe('GET /api/leaderboard', () => {
    it('ranks scored servers, 10 by default, with the COMPAT.md fields', async () => {
      const res = await get('/api/leaderboard');
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ category: 'all', total_results: 10 });
      expect(Date.parse(body.generated_at)).not.toBeNaN();
      expect(body.servers).toHaveLength(10);
      for (const s of body.servers) {
        expect(s).toMatchObject({
          url: expect.any(String),
          name: expect.any(String),
          category: expect.any(String),
          trust_score: expect.any(Number),
          total_interactions: expect.any(Number),
        });
        expect(s).toHaveProperty('success_rate');
        expect(s).toHaveProperty('avg_latency_ms');
        expect(Date.parse(s.tracked_since)).not.toBeNaN();
      }
      const scores = body.servers.map((s: { trust_score: number }) => s.trust_score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      // every server that answers MCP ranks above the two that never did
      const ranks = body.servers.map((s: { url: string }) => s.url);
      expect(ranks).not.toContain(url.html);
      expect(ranks).not.toContain(url.dead);
    });

    it('filters by category (case-insensitive)', async () => {
      const body = (await get('/api/leaderboard?category=Weather&limit=50')).json();
      expect(body.category).toBe('weather');
      expect(body.servers.map((s: { url: string }) => s.url).sort()).toEqual([url.healthy, url.html].sort());
    });

    it('takes up to 50 and refuses more, or an unknown category, with 400', async () => {
      const fifty = (await get('/api/leaderboard?limit=50')).json();
      expect(fifty.servers.length).toBeGreaterThan(10);
      expect(fifty.servers.length).toBeLessThanOrEqual(50);
      expectProblem(await get('/api/leaderboard?limit=51'), 400);
      expectProblem(await get('/api/leaderboard?limit=0'), 400);
      const problem = expectProblem(await get('/api/leaderboard?category=gossip'), 400);
      for (const c of CATEGORIES) expect(problem.detail).toContain(c);
    });
  });

  describe('GET /api/servers', () => {
    const total = TOTAL_SERVERS;

    it('pages through every server by cursor, with no duplicates and no gaps', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await get(`/api/servers?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body.count).toBe(body.servers.length);
        seen.push(...body.servers.map((s: { url: string }) => s.url));
        cursor = body.next_cursor;
        pages += 1;
      } while (cursor && pages < 100);
      expect(pages).toBe(Math.ceil(total / 7));
      expect(seen).toHaveLength(total);
      expect(new Set(seen).size).toBe(total);
      const stored = await h.runtime.db.sql<{ url: string }[]>`SELECT url FROM servers`;
      expect([...seen].sort()).toEqual(stored.map((s) => s.url).sort());
    });

    it('gives 50 by default and up to 500; more is a 400', async () => {
      const page = (await get('/api/servers')).json();
      expect(page.count).toBe(50);
      expect(page.next_cursor).toEqual(expect.any(String));
      expect((await get('/api/servers?limit=500')).json().count).toBe(total);
      expectProblem(await get('/api/servers?limit=501'), 400);
    });

    it('marks servers known only from reports with source "reported", and filters by category', async () => {
      const all = (await get('/api/servers?limit=500')).json().servers as Array<{
        url: string;
        source: string;
      }>;
      expect(all.find((s) => s.url === 'https://reported-0.example.org/mcp')?.source).toBe('reported');
      expect(all.find((s) => s.url === url.healthy)?.source).toBe('registered');
      const finance = (await get('/api/servers?category=finance')).json();
      expect(finance.servers.map((s: { url: string }) => s.url).sort()).toEqual([url.peer, url.dead].sort());
    });

    it('refuses a cursor it did not issue', async () => {
      expectProblem(await get('/api/servers?cursor=bm9wZQ'), 400);
    });
  });

  describe('GET /api/stats, /api/external-agents, /atlas/report', () => {
    it('/api/stats counts servers and interactions (COMPAT.md names)', async () => {
      const body = (await get('/api/stats')).json();
      const interactions = await countRows(h, 'interaction_reports');
      expect(body).toMatchObject({
        total_servers_tracked: TOTAL_SERVERS,
        total_interactions_recorded: interactions,
        interactions_last_24h: interactions,
        average_trust_score: expect.any(Number),
        data_collection_started: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect(interactions).toBe(REPORTED_SERVERS + 20);
      const weather = body.categories.find((c: { name: string }) => c.name === 'weather');
      expect(weather).toMatchObject({ servers: 2 });
      expect(body.categories.map((c: { name: string }) => c.name)).toEqual(
        expect.arrayContaining([...CATEGORIES]),
      );
    });

    it('/api/external-agents audits who reported what (COMPAT.md names)', async () => {
      const body = (await get('/api/external-agents')).json();
      expect(body.totals).toEqual({
        distinct_agents: 3,
        total_rows: REPORTED_SERVERS + 20,
        last_24h_distinct: 3,
        last_24h_rows: REPORTED_SERVERS + 20,
      });
      const a = body.rows.find((r: { agent_id: string }) => r.agent_id === 'agent-a');
      expect(a).toMatchObject({ row_count: 20, rows_24h: 20 });
      expect(a.first_tool_name).toMatch(/^forecast-/);
      expect(a.last_tool_name).toMatch(/^forecast-/);
      expect(Date.parse(a.first_seen)).toBeLessThanOrEqual(Date.parse(a.last_seen));
    });

    it('/atlas/report gives coverage as JSON, and as HTML to a browser', async () => {
      const json = await get('/atlas/report');
      expect(json.headers['content-type']).toMatch(/^application\/json/);
      expect(json.json().totals).toMatchObject({
        indexed: TOTAL_SERVERS,
        verifiable_at_runtime: HEALTHY_SERVERS,
      });
      const html = await get('/atlas/report', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
      expect(html.statusCode).toBe(200);
      expect(html.headers['content-type']).toMatch(/^text\/html/);
      expect(html.body).toContain('<!doctype html>');
      expect(html.body).toContain(`Of ${TOTAL_SERVERS} servers indexed`);
    });
  });

  it("folds agent reports into the trust data at the analyzer's next pass", async () => {
    // server rows are cached for up to a second (trust.service FIND_CACHE_MS): read after it
    await new Promise((r) => setTimeout(r, 1_100));
    const trust = (await get(`/api/trust?url=${encodeURIComponent(url.healthy)}`)).json();
    expect(trust.metrics).toMatchObject({ total_calls: 20, success_rate: 1 });
    expect(trust.recent_7d.interactions).toBe(20);
    expect(trust.recent_7d.avg_latency_ms).toBeCloseTo(49.5, 5);
    expect(trust.metrics.agents_30d).toBe(1);
    expect((await query(url.healthy)).json().evidence).toBe('probes_and_reports');
    // a server known only from reports: evidence, but never a verdict on reports alone
    const reported = (await query('https://reported-1.example.org/mcp')).json();
    expect(reported).toMatchObject({ evidence: 'reports_only', verdict: 'UNCERTAIN' });
    const atlas = (await get('/atlas/report')).json();
    expect(atlas.totals.with_behavioural_record).toBe(TOTAL_SERVERS);
  });
});
