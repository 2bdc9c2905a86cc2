import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJobHandlers, createServices, type Services } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { deadUrl, type Fleet, startFleet } from '@observatory/testkit';
import type { FastifyInstance } from 'fastify';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { acmeWeatherPlan, analyze, register, seedHistory, steadyPlan } from './pages-fixture.ts';

/**
 * The pages in a real browser: Debian's Chromium driven by playwright-core. Screenshots go to
 * test-artifacts/screenshots/ (the README's come from here). Without Chromium the suite is
 * skipped on a developer machine — never in CI, where scripts/ci-extras.sh installs it.
 */
const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const skip = !hasChromium && !process.env.CI;
if (skip) {
  console.warn(
    `pages.browser.test: skipped, ${CHROMIUM} is missing (apt-get install -y chromium, or scripts/ci-extras.sh). CI never skips it.`,
  );
}

/**
 * The few DOM members the functions passed to page.evaluate use: they run in the browser, and
 * the project compiles without the DOM library.
 */
interface PageElement {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
}
declare const document: {
  documentElement: { lang: string };
  activeElement: PageElement | null;
  images: ArrayLike<{ complete: boolean; naturalWidth: number }>;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
};

const ARTIFACTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test-artifacts/screenshots',
);

/** A small, believable directory: months of history for some, live probes for others. */
const STEADY = [
  { name: 'Open-Meteo Bridge', category: 'weather', seed: 1, ms: 180, uptime: 0.999 },
  { name: 'Ledger Finance', category: 'finance', seed: 2, ms: 240, uptime: 0.985 },
  { name: 'Code Search Pro', category: 'code', seed: 3, ms: 90, uptime: 0.998 },
  { name: 'Repo Insights', category: 'code', seed: 4, ms: 320, uptime: 0.85 },
  { name: 'Vector Search', category: 'search', seed: 5, ms: 60, uptime: 0.9995 },
  { name: 'Transit Times', category: 'transport', seed: 6, ms: 150, uptime: 0.992 },
  { name: 'Calendar Sync', category: 'productivity', seed: 7, ms: 120, uptime: 0.997 },
  { name: 'Team Chat Relay', category: 'communication', seed: 8, ms: 210, uptime: 0.93 },
] as const;

describe.skipIf(skip)('pages in Chromium', () => {
  let runtime: TestRuntime;
  let services: Services;
  let app: FastifyInstance;
  let fleet: Fleet;
  let base: string;
  let context: BrowserContext;
  let profileDir: string;
  let acmeSlug: string;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    const now = new Date();
    // the badge snippets on the status page show this base URL
    runtime = await createTestRuntime({ env: { PUBLIC_BASE_URL: 'https://observatory.example.com' } });
    services = await createServices(runtime);
    app = await buildApp(runtime, { services, logRequests: false });
    fleet = await startFleet();

    const acme = await register(services, {
      url: 'https://mcp.acme-weather.example/mcp',
      name: 'Acme Weather',
      category: 'weather',
      description: 'Forecasts and severe-weather alerts for 40,000 cities.',
    });
    acmeSlug = acme.slug;
    await seedHistory(services, acme.id, new Date(now.getTime() - 60_000), acmeWeatherPlan(now));
    for (const s of STEADY) {
      const { id } = await register(services, {
        url: `https://mcp.${s.name.toLowerCase().replace(/[^a-z]+/g, '-')}.example/mcp`,
        name: s.name,
        category: s.category,
      });
      await seedHistory(services, id, new Date(now.getTime() - 60_000), steadyPlan(s.seed, s.ms, s.uptime));
    }
    // two live ones, probed for real: a closed port and a web page that is not MCP
    const { handlers } = createJobHandlers(services);
    for (const [name, url] of [
      ['Warehouse Query', await deadUrl()],
      ['Docs Portal', fleet.add('html').url],
    ] as const) {
      const { id } = await register(services, { url, name, category: 'data' });
      await handlers.probe!(
        { serverId: id, url, slot: now.toISOString() },
        { jobId: `probe-${id}-${now.getTime()}`, attempt: 1 },
      );
    }
    await analyze(services, now);

    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

    profileDir = mkdtempSync(path.join(os.tmpdir(), 'observatory-chromium-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    // playwright passes a profile directory as --user-data-dir itself (launchPersistentContext)
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
      viewport: { width: 1280, height: 900 },
    });
    context.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await runtime?.close();
    await fleet?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  /** Structure every page must have: a language, one h1, no skipped heading level, labels. */
  async function checkAccessibility(page: Page) {
    const report = await page.evaluate(() => {
      const levels = Array.from(document.querySelectorAll('h1, h2, h3, h4')).map((h) => Number(h.tagName[1]));
      const skipped = levels.some((level, i) => i > 0 && level > levels[i - 1]! + 1);
      const unlabelled = Array.from(document.querySelectorAll('input, select')).filter((el) => {
        const id = el.getAttribute('id');
        return !(id && document.querySelector(`label[for="${id}"]`)) && !el.getAttribute('aria-label');
      }).length;
      const imagesWithoutAlt = Array.from(document.querySelectorAll('img')).filter(
        (img) => !img.hasAttribute('alt'),
      ).length;
      const svgsWithoutName = Array.from(document.querySelectorAll('svg[role="img"]')).filter(
        (svg) => !svg.getAttribute('aria-labelledby') && !svg.getAttribute('aria-label'),
      ).length;
      return {
        lang: document.documentElement.lang,
        h1: levels.filter((l) => l === 1).length,
        skipped,
        unlabelled,
        imagesWithoutAlt,
        svgsWithoutName,
      };
    });
    expect(report).toEqual({
      lang: 'en',
      h1: 1,
      skipped: false,
      unlabelled: 0,
      imagesWithoutAlt: 0,
      svgsWithoutName: 0,
    });
  }

  it('shows the dashboard, and its search box leads to a status page by keyboard', async () => {
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await expect(page.title()).resolves.toBe('MCP Trust Observatory');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Runtime trust for MCP servers');
    const tracked = page.locator('.stat', { hasText: 'Servers tracked' }).locator('dd');
    expect(await tracked.textContent()).toBe('11');
    expect(await page.getByRole('link', { name: 'Acme Weather' }).count()).toBeGreaterThan(0);
    expect(await page.getByRole('heading', { name: 'Top servers by category' }).isVisible()).toBe(true);
    await checkAccessibility(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });

    // keyboard only: the first Tab reaches the skip link, the search box takes text and Enter
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.getByLabel('Find a server by name, slug or URL').fill('acme');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/servers\?q=acme/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Results for “acme”');
    await checkAccessibility(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'search.png'), fullPage: true });
    await page.getByRole('link', { name: 'Acme Weather' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/servers/${acmeSlug}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Acme Weather');
    await page.close();
  });

  it('shows a status page with its charts, incidents, drift and working badge images', async () => {
    const page = await context.newPage();
    await page.goto(`${base}/servers/${acmeSlug}`);
    expect(await page.locator('.verdict-box .verdict').textContent()).toMatch(/^(PASS|UNCERTAIN|FAIL)$/);
    for (const name of ['Daily uptime, last 30 days', 'Daily uptime, last 90 days']) {
      expect(await page.getByRole('img', { name }).isVisible()).toBe(true);
    }
    const chart = page.getByRole('img', { name: /Latency of answering probes, daily p50 and p95/ });
    expect(await chart.isVisible()).toBe(true);
    expect(await chart.locator('path').count()).toBe(2);
    expect(await page.getByRole('heading', { name: 'Recent incidents' }).isVisible()).toBe(true);
    expect(await page.locator('#incidents-heading + .table-wrap tbody tr').count()).toBeGreaterThan(0);
    expect(await page.getByText('added forecast_hourly, severe_alerts').isVisible()).toBe(true);
    // the three badge previews are real images served by /badge
    const widths = await page
      .locator('.badges img')
      .evaluateAll((imgs) => imgs.map((img) => (img as unknown as { naturalWidth: number }).naturalWidth));
    expect(widths).toHaveLength(3);
    for (const w of widths) expect(w).toBeGreaterThan(50);
    // the data tables behind the charts open without a script
    await page.getByText('Daily figures, last 30 days').click();
    expect(await page.locator('details[open] table tbody tr').first().isVisible()).toBe(true);
    await page.getByText('Daily figures, last 30 days').click();
    await checkAccessibility(page);
    await page.screenshot({ path: path.join(ARTIFACTS, 'status-page.png'), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'status-page-mobile.png'), fullPage: true });
    await page.close();
  });

  it('shows the badges on their own', async () => {
    const page = await context.newPage();
    await page.setViewportSize({ width: 780, height: 60 });
    // badges are 20 px high; shown at 28 px (SVG scales cleanly) on a white strip
    const img = (query: string) => `<img height="28" src="${base}/badge/${acmeSlug}.svg${query}">`;
    await page.setContent(
      `<body style="margin:16px;display:flex;gap:10px;align-items:flex-start;background:#fff">${img('')}${img('?metric=uptime')}${img('?metric=verdict')}${`<img height="28" src="${base}/badge/not-tracked.svg">`}</body>`,
    );
    await page.waitForFunction(() =>
      Array.from(document.images).every((img) => img.complete && img.naturalWidth > 0),
    );
    await page.screenshot({ path: path.join(ARTIFACTS, 'badges.png') });

    const response = await page.goto(`${base}/badge/${acmeSlug}.svg`);
    expect(response?.headers()['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(await page.locator('svg').getAttribute('aria-label')).toMatch(/^MCP trust: \d+\/100$/);
    const unknown = await page.goto(`${base}/badge/not-tracked-here.svg`);
    expect(unknown?.status()).toBe(200);
    expect(await page.locator('svg').getAttribute('aria-label')).toBe('MCP trust: unknown');
    await page.close();
  });

  it('raised no console errors (no CSP violation, no missing resource)', () => {
    expect(consoleErrors).toEqual([]);
  });
});
