import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CATEGORIES } from '@observatory/core';
import {
  type AnalyzedServerRow,
  decodeCursor,
  encodeCursor,
  HttpProblem,
  type Services,
  serviceInfo,
} from '@observatory/service';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { loadHome, renderHomeBody } from './home.page.ts';
import { FAVICON_SVG, PAGE_SECURITY_HEADERS, type PageShell, renderPage } from './layout.ts';
import { cleanText, hasControlCharacters, prefersJson, wantsHtmlError } from './negotiation.ts';
import { pagesRepository } from './pages.repository.ts';
import { loadStatusPage, renderStatusBody } from './server-status.page.ts';
import { renderNotFoundBody, renderServersListBody } from './servers-list.page.ts';

const SEARCH_LIMIT = 50;
const PAGE_SIZE = 50;

/** A server by slug, URL or name; text that is not even a valid URL is simply not found. */
async function findServer(services: Services, identifier: string): Promise<AnalyzedServerRow | undefined> {
  if (!identifier || identifier.length > 2048 || hasControlCharacters(identifier)) return undefined;
  try {
    return await services.trust.find(identifier);
  } catch (err) {
    if (err instanceof HttpProblem) return undefined;
    throw err;
  }
}

/**
 * The human front end: the dashboard at /, the server directory and search at /servers, and a
 * status page per server at /servers/<slug>. Server-rendered HTML, no script; everything a
 * stranger wrote (names, descriptions, tool names, error text) is escaped by html`…`.
 */
export function pagesRoutes(app: FastifyInstance, services: Services) {
  const { config } = services.runtime;
  const pages = pagesRepository(services.runtime.db.sql);
  const css = readFileSync(new URL('./assets/observatory.css', import.meta.url), 'utf8');
  const cssEtag = `"${createHash('sha256').update(css).digest('base64url').slice(0, 22)}"`;

  const sendPage = (reply: FastifyReply, status: number, shell: Omit<PageShell, 'operator' | 'region'>) => {
    reply.status(status).headers(PAGE_SECURITY_HEADERS).header('cache-control', 'no-cache');
    return reply
      .type('text/html; charset=utf-8')
      .send(renderPage({ ...shell, operator: config.OPERATOR, region: config.REGION }));
  };

  app.get('/assets/observatory.css', { schema: { hide: true } }, async (request, reply) => {
    reply.header('cache-control', 'public, max-age=3600').header('etag', cssEtag);
    if (request.headers['if-none-match'] === cssEtag) return reply.status(304).send();
    return reply.type('text/css; charset=utf-8').send(css);
  });

  app.get('/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').send(FAVICON_SVG),
  );

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (prefersJson(request.headers.accept)) return serviceInfo(services.runtime);
    const data = await loadHome(services);
    return sendPage(reply, 200, {
      title: 'MCP Trust Observatory',
      current: 'dashboard',
      body: renderHomeBody(data),
    });
  });

  app.get('/servers', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const q = cleanText(query.q);
    const categoryText = cleanText(query.category, 50).toLowerCase();
    const category = (CATEGORIES as readonly string[]).includes(categoryText) ? categoryText : null;
    const now = new Date();

    if (q) {
      // a URL or slug that names exactly one server goes straight to its page
      const exact = await findServer(services, q);
      if (exact && (exact.slug === q.toLowerCase() || exact.url === q || /^https?:\/\//i.test(q))) {
        return reply.redirect(`/servers/${encodeURIComponent(exact.slug)}`, 303);
      }
      const found = (await pages.search(q, SEARCH_LIMIT)) as AnalyzedServerRow[];
      const rows = category ? found.filter((s) => s.category === category) : found;
      return sendPage(reply, 200, {
        title: `Search: ${q} · MCP Trust Observatory`,
        current: 'servers',
        query: q,
        body: renderServersListBody({ query: q, category, rows, nextHref: null, now }),
      });
    }

    // keyset pages with the same opaque cursors as /api/servers; a cursor we did not issue
    // starts from the first page instead of failing a browser
    let afterId = 0;
    try {
      afterId = decodeCursor(cleanText(query.cursor) || undefined);
    } catch {}
    const found = (await services.runtime.repos.servers.list({
      category: category ?? undefined,
      afterId,
      limit: PAGE_SIZE + 1,
    })) as AnalyzedServerRow[];
    const rows = found.slice(0, PAGE_SIZE);
    const next = found.length > PAGE_SIZE ? encodeCursor(rows[rows.length - 1]!.id) : null;
    const params = new URLSearchParams({
      ...(category ? { category } : {}),
      ...(next ? { cursor: next } : {}),
    });
    return sendPage(reply, 200, {
      title: 'Servers · MCP Trust Observatory',
      current: 'servers',
      body: renderServersListBody({
        query: '',
        category,
        rows,
        nextHref: next ? `/servers?${params}` : null,
        now,
      }),
    });
  });

  app.get('/servers/:slug', { schema: { hide: true } }, async (request, reply) => {
    const { slug } = request.params as { slug: string };
    const server = await findServer(services, slug);
    if (!server) {
      if (!wantsHtmlError(request.headers.accept)) {
        throw new HttpProblem(404, 'Not Found', `No tracked server has the slug "${cleanText(slug, 100)}".`);
      }
      return sendPage(reply, 404, {
        title: 'Server not found · MCP Trust Observatory',
        body: renderNotFoundBody(slug),
      });
    }
    // a name or URL finds the server too; its page lives at its slug
    if (server.slug !== slug) return reply.redirect(`/servers/${encodeURIComponent(server.slug)}`, 301);
    if (prefersJson(request.headers.accept)) return services.trust.checkTrust(server.url);
    const data = await loadStatusPage(services, pages, server);
    return sendPage(reply, 200, {
      title: `${server.name} · status · MCP Trust Observatory`,
      description: `Uptime, latency, incidents and the trust verdict of ${server.name}, measured with real MCP handshakes.`,
      current: 'servers',
      body: renderStatusBody(data),
    });
  });
}
