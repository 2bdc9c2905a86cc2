import { createJobHandlers, createServices, type Services } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { acmeWeatherPlan, analyze, register, seedHistory } from './pages-fixture.ts';

const EVIL_NAME = '<script>alert("name")</script> Evil & Co';
const EVIL_DESCRIPTION = '"><img src=x onerror=alert(1)> steals your tokens';
const EVIL_TOOL = '<b onmouseover=alert(2)>bold_tool</b>';

describe('HTML pages and badges', () => {
  let runtime: TestRuntime;
  let services: Services;
  let app: FastifyInstance;
  let fleet: Fleet;
  let acme: { id: number; slug: string; url: string };
  let evil: { id: number; slug: string; url: string };
  let dead: { id: number; slug: string; url: string };
  const now = new Date();

  beforeAll(async () => {
    runtime = await createTestRuntime({ env: { PUBLIC_BASE_URL: 'https://observatory.test' } });
    services = await createServices(runtime);
    app = await buildApp(runtime, { services, logRequests: false });
    fleet = await startFleet();

    acme = await register(services, {
      url: 'https://mcp.acme-weather.example/mcp',
      name: 'Acme Weather',
      category: 'weather',
      description: 'Forecasts and severe-weather alerts for 40,000 cities.',
    });
    await seedHistory(services, acme.id, new Date(now.getTime() - 60_000), acmeWeatherPlan(now));

    // Anyone can register a server: its name, description, tool names and errors are hostile text.
    evil = await register(services, {
      url: 'https://evil.example/mcp',
      name: EVIL_NAME,
      category: 'weather',
      description: EVIL_DESCRIPTION,
    });
    await seedHistory(services, evil.id, new Date(now.getTime() - 60_000), {
      days: 2,
      probe: (_at, age) =>
        age < 3 * 3_600_000
          ? { outcome: 'not_mcp', ms: 12, error: '<i>not json</i> & "quoted"', httpStatus: 200 }
          : { outcome: 'up', ms: 80 },
      tools: () => ['echo', EVIL_TOOL],
    });

    // a real probe of a closed port: a real incident
    dead = await register(services, { url: await deadUrl(), name: 'Gone Server', category: 'data' });
    const { handlers } = createJobHandlers(services);
    await handlers.probe!(
      { serverId: dead.id, url: dead.url, slot: now.toISOString() },
      { jobId: `probe-${dead.id}-${now.getTime()}`, attempt: 1 },
    );
    await analyze(services, now);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await fleet?.close();
  });

  const get = (url: string, accept = 'text/html,application/xhtml+xml') =>
    app.inject({ method: 'GET', url, headers: { accept } });

  describe('dashboard /', () => {
    it('is an accessible HTML page with live figures, top servers and a search form', async () => {
      const res = await get('/');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      const body = res.body;
      expect(body).toMatch(/^<!doctype html>\n<html lang="en">/);
      expect(body).toContain('<h1 id="hero-heading">Runtime trust for MCP servers</h1>');
      // the search form: a GET form with a labelled input
      expect(body).toMatch(/<form class="search-form" role="search" action="\/servers" method="get">/);
      expect(body).toContain('<label for="q">');
      expect(body).toContain('id="q" type="search" name="q"');
      // live figures from the service layer
      expect(body).toMatch(/<dt>Servers tracked<\/dt><dd>3</);
      expect(body).toContain('Top servers by category');
      expect(body).toContain(`href="/servers/${acme.slug}">Acme Weather</a>`);
      // the coverage table names the populated categories
      expect(body).toMatch(
        /<th scope="row"><a href="\/servers\?category=weather">weather<\/a><\/th><td class="num">2<\/td>/,
      );
      // no script anywhere
      expect(body).not.toMatch(/<script/i);
    });

    it('escapes what strangers wrote', async () => {
      const body = (await get('/')).body;
      expect(body).not.toContain('<script>alert');
      expect(body).toContain('&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt; Evil &amp; Co');
    });

    it('answers JSON clients with the service description', async () => {
      const res = await get('/', 'application/json');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: 'MCP Trust Observatory', version: '1.0.0' });
    });

    it('serves its stylesheet with cache validators', async () => {
      const css = await get('/assets/observatory.css', 'text/css');
      expect(css.statusCode).toBe(200);
      expect(css.headers['content-type']).toContain('text/css');
      expect(css.headers['cache-control']).toContain('max-age=');
      const again = await app.inject({
        url: '/assets/observatory.css',
        headers: { 'if-none-match': String(css.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
    });
  });

  describe('search /servers?q=', () => {
    it('finds servers by part of their name, slug or URL', async () => {
      for (const q of ['acme', 'ACME WEATHER', 'acme-weather.example', 'weather.example/mc']) {
        const res = await get(`/servers?q=${encodeURIComponent(q)}`);
        expect(res.statusCode, q).toBe(200);
        expect(res.body, q).toContain(`href="/servers/${acme.slug}">Acme Weather</a>`);
        expect(res.body, q).not.toContain('Gone Server');
      }
    });

    it('goes straight to the status page for an exact URL or slug', async () => {
      for (const q of [acme.url, acme.slug]) {
        const res = await get(`/servers?q=${encodeURIComponent(q)}`);
        expect(res.statusCode).toBe(303);
        expect(res.headers.location).toBe(`/servers/${acme.slug}`);
      }
    });

    it('says so when nothing matches, and escapes the query', async () => {
      const res = await get(`/servers?q=${encodeURIComponent('<svg onload=alert(3)>')}`);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('No tracked server has “&lt;svg onload=alert(3)&gt;”');
      expect(res.body).not.toContain('<svg onload');
    });

    it('lists servers by category without a query, ignoring unknown categories and cursors', async () => {
      const data = await get('/servers?category=data');
      expect(data.body).toContain('Gone Server');
      expect(data.body).not.toContain('Acme Weather');
      const all = await get('/servers?category=nonsense&cursor=garbage');
      expect(all.statusCode).toBe(200);
      expect(all.body).toContain('Gone Server');
      expect(all.body).toContain('Acme Weather');
    });
  });

  describe('status page /servers/<slug>', () => {
    it('shows verdict, uptime bars, latency chart, anomalies, incidents, tools, drift and the badge snippet', async () => {
      const res = await get(`/servers/${acme.slug}`);
      expect(res.statusCode).toBe(200);
      const body = res.body;
      expect(body).toContain('<h1 id="server-name">Acme Weather</h1>');
      expect(body).toMatch(/<div class="verdict">(PASS|UNCERTAIN|FAIL)<\/div>/);
      // 30- and 90-day uptime bars: one rect per day, each with its figure as a tooltip
      const bars = (id: string) =>
        body.match(new RegExp(`<svg class="uptime-bars" id="${id}"[\\s\\S]*?</svg>`))![0];
      expect(bars('uptime-30').match(/<rect /g)).toHaveLength(30);
      expect(bars('uptime-90').match(/<rect /g)).toHaveLength(90);
      expect(bars('uptime-90')).toContain('role="img"');
      // the six-hour outage 20 days ago shows as days with less than full uptime
      expect(bars('uptime-30')).toMatch(
        /<title>\d{4}-\d{2}-\d{2}: [89]\d\.\d\d% up \(\d+ of 24 probes\)<\/title>/,
      );
      expect(bars('uptime-30')).toMatch(
        /<desc id="uptime-30-desc">Daily uptime, last 30 days: 9\d\.\d\d% up over 30 days with probes; \d+ days with failed probes\.<\/desc>/,
      );
      // the latency chart: daily p50 and p95 lines, described for screen readers
      expect(body).toContain('<svg class="chart" id="latency-chart"');
      expect(body).toContain('aria-labelledby="latency-chart-title latency-chart-desc"');
      expect(body).toContain('Latency of answering probes, daily p50 and p95, last 30 days');
      // open anomaly: the last hours were three times slower than its own baseline
      expect(body).toMatch(/<span class="sev-(low|medium|high)">/);
      expect(body).toContain('own baseline');
      // the six-hour outage and the scattered 502s are incidents
      expect(body).toContain('timed out after 10000 ms');
      expect(body).toContain('HTTP 502 Bad Gateway');
      // tools now, and the change 35 days ago
      expect(body).toContain('<li>forecast_hourly</li>');
      expect(body).toMatch(/added forecast_hourly, severe_alerts/);
      expect(body).toMatch(/removed legacy_alerts/);
      // badge snippets, with the public base URL
      expect(body).toContain(
        `[![MCP trust score](https://observatory.test/badge/${acme.slug}.svg)](https://observatory.test/servers/${acme.slug})`,
      );
      expect(body).toContain(
        `&lt;a href=&quot;https://observatory.test/servers/${acme.slug}&quot;&gt;&lt;img src=&quot;https://observatory.test/badge/${acme.slug}.svg&quot;`,
      );
      expect(body).toContain(`<img src="/badge/${acme.slug}.svg?metric=uptime" alt="30-day uptime badge"`);
    });

    it('shows a real failed probe as an ongoing incident and a FAIL-bound record', async () => {
      const body = (await get(`/servers/${dead.slug}`)).body;
      expect(body).toContain('<h1 id="server-name">Gone Server</h1>');
      expect(body).toMatch(/<strong>Down<\/strong> <span class="pill pill-fail">ONGOING<\/span>/);
      expect(body).toContain('No tool list yet');
    });

    it('escapes names, descriptions, tool names and error messages', async () => {
      const body = (await get(`/servers/${evil.slug}`)).body;
      expect(body).not.toMatch(/<script|<img src=x|<b onmouseover|<i>not json/);
      expect(body).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt; steals your tokens');
      expect(body).toContain('&lt;b onmouseover=alert(2)&gt;bold_tool&lt;/b&gt;');
      expect(body).toContain('&lt;i&gt;not json&lt;/i&gt; &amp; &quot;quoted&quot;');
      expect(body).toContain(
        '<title>&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt; Evil &amp; Co · status',
      );
    });

    it('negotiates by q-values: a client that ranks JSON higher gets JSON, and errors as problems', async () => {
      const accept = 'text/html;q=0.1, application/json;q=0.2, */*;q=0';
      expect((await get(`/servers/${acme.slug}`, accept)).json()).toMatchObject({ found: true });
      const missing = await get('/servers/no-such-server', accept);
      expect(missing.statusCode).toBe(404);
      expect(missing.headers['content-type']).toContain('application/problem+json');
      expect((await get('/servers/no-such-server', 'text/html;q=0')).headers['content-type']).toContain(
        'application/problem+json',
      );
      expect((await get('/', 'application/json;q=0.5, text/html')).headers['content-type']).toContain(
        'text/html',
      );
    });

    it('treats control characters in slugs and queries as text that matches nothing, never a 500', async () => {
      // NUL is refused for every route by the input guard; other control characters reach the pages
      expect((await get('/servers/%00')).statusCode).toBe(400);
      expect((await get('/servers/acme%01weather', 'application/json')).statusCode).toBe(404);
      const search = await get('/servers?q=acme%01&category=%02');
      expect(search.statusCode).toBe(200);
      expect(search.body).toContain('Acme Weather');
      const badge = await app.inject({ url: '/badge/a%01b.svg' });
      expect(badge.statusCode).toBe(200);
      expect(badge.body).toContain(': unknown"');
    });

    it('redirects a name or URL to the canonical slug', async () => {
      const res = await get(`/servers/${encodeURIComponent('Acme Weather')}`);
      expect(res.statusCode).toBe(301);
      expect(res.headers.location).toBe(`/servers/${acme.slug}`);
    });

    it('answers JSON clients with the trust view', async () => {
      const res = await get(`/servers/${acme.slug}`, 'application/json');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ found: true, slug: acme.slug, name: 'Acme Weather' });
    });

    it('answers an unknown slug with an HTML 404 for browsers and a problem for the rest', async () => {
      const page = await get('/servers/no-such-server');
      expect(page.statusCode).toBe(404);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.body).toContain('<h1 id="nf-heading">Server not found</h1>');
      expect(page.body).toContain('<code>no-such-server</code>');

      const hostile = await get(`/servers/${encodeURIComponent('<img src=x>')}`);
      expect(hostile.statusCode).toBe(404);
      expect(hostile.body).not.toContain('<img src=x>');

      for (const accept of ['application/json', '*/*']) {
        const problem = await get('/servers/no-such-server', accept);
        expect(problem.statusCode).toBe(404);
        expect(problem.headers['content-type']).toContain('application/problem+json');
        expect(problem.json()).toMatchObject({ status: 404, title: 'Not Found' });
      }
    });
  });

  describe('badges /badge/<server>.svg', () => {
    const badge = (url: string, headers: Record<string, string> = {}) => app.inject({ url, headers });

    it('render the trust score, uptime and verdict as flat SVG badges with cache headers', async () => {
      const score = await badge(`/badge/${acme.slug}.svg`);
      expect(score.statusCode).toBe(200);
      expect(score.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      expect(score.headers['cache-control']).toBe('public, max-age=300');
      expect(score.headers.etag).toMatch(/^"[\w-]+"$/);
      expect(score.body).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      expect(score.body).toMatch(/aria-label="MCP trust: \d+\/100"/);

      const uptime = await badge(`/badge/${acme.slug}.svg?metric=uptime`);
      expect(uptime.body).toMatch(/aria-label="uptime 30d: 9\d\.\d+%"/);
      const verdict = await badge(`/badge/${acme.slug}.svg?metric=verdict`);
      expect(verdict.body).toMatch(/aria-label="MCP verdict: (pass|uncertain|fail)"/);
      const deadVerdict = await badge(`/badge/${dead.slug}.svg?metric=score`);
      expect(deadVerdict.body).toMatch(/aria-label="MCP trust: (\d+\/100|no data)"/);
    });

    it('find a server by its URL-encoded URL too', async () => {
      const byUrl = await badge(`/badge/${encodeURIComponent(acme.url)}.svg`);
      const bySlug = await badge(`/badge/${acme.slug}.svg`);
      expect(byUrl.statusCode).toBe(200);
      expect(byUrl.body).toBe(bySlug.body);
    });

    it('answer a matching If-None-Match with 304', async () => {
      const first = await badge(`/badge/${acme.slug}.svg`);
      const second = await badge(`/badge/${acme.slug}.svg`, { 'if-none-match': String(first.headers.etag) });
      expect(second.statusCode).toBe(304);
      expect(second.body).toBe('');
    });

    it('show a grey "unknown" badge for servers we do not track, never an error', async () => {
      for (const url of [
        '/badge/nobody-knows.svg',
        `/badge/${encodeURIComponent('https://unknown.example/mcp')}.svg?metric=verdict`,
        '/badge/no-extension',
        `/badge/${encodeURIComponent('https://bad url/')}.svg`,
      ]) {
        const res = await badge(url);
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['content-type'], url).toBe('image/svg+xml; charset=utf-8');
        expect(res.body, url).toMatch(/aria-label="[^"]+: unknown"/);
        // the message half is grey (equal red, green and blue)
        expect(res.body, url).toMatch(/<rect x="\d+" width="\d+" height="20" fill="#([0-9a-f]{2})\1\1"\/>/);
        expect(res.headers['cache-control'], url).toBe('public, max-age=60');
      }
    });
  });
});

describe('HTML pages of a new observatory', () => {
  let runtime: TestRuntime;
  let app: FastifyInstance;
  beforeAll(async () => {
    runtime = await createTestRuntime();
    app = await buildApp(runtime, { logRequests: false });
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
  });

  it('say there is nothing yet instead of showing empty tables, then show a server before its first probe', async () => {
    const home = await app.inject({ url: '/', headers: { accept: 'text/html' } });
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('No server has a trust score yet.');
    expect(home.body).toContain('No servers indexed yet.');

    const res = await app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { server_url: 'https://fresh.example/mcp', name: 'Fresh Server' },
    });
    expect(res.statusCode).toBe(201);
    const page = await app.inject({ url: '/servers/fresh-server', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<div class="verdict">UNCERTAIN</div>');
    expect(page.body).toContain('No probes yet.');
    expect(page.body).toContain('No chart yet');
    expect(page.body).toContain('No tool list yet');
    expect(page.body).toContain('Daily uptime, last 90 days: no conclusive probes yet.');
    const badge = await app.inject({ url: '/badge/fresh-server.svg' });
    expect(badge.body).toContain('aria-label="MCP trust: no data"');
  });
});
