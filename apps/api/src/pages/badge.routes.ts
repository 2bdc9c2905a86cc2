import { createHash } from 'node:crypto';
import { HttpProblem, type Services } from '@observatory/service';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BADGE_METRICS, type BadgeFacts, type BadgeMetric, renderBadge } from './badge.ts';
import { hasControlCharacters } from './negotiation.ts';

const MAX_AGE_KNOWN = 300;
/** Shorter for "unknown": a server registered a minute later should get its badge soon. */
const MAX_AGE_UNKNOWN = 60;

/** The server part of /badge/<slug or URL-encoded URL>.svg, decoded; null when malformed. */
function badgeIdentifier(url: string): string | null {
  const path = url.split('?')[0]!.slice('/badge/'.length);
  if (!path.endsWith('.svg')) return null;
  try {
    const id = decodeURIComponent(path.slice(0, -'.svg'.length)).trim();
    return id.length > 0 && id.length <= 2048 && !hasControlCharacters(id) ? id : null;
  } catch {
    return null;
  }
}

function sendSvg(request: FastifyRequest, reply: FastifyReply, svg: string, maxAge: number) {
  const etag = `"${createHash('sha256').update(svg).digest('base64url').slice(0, 22)}"`;
  reply
    .header('cache-control', `public, max-age=${maxAge}`)
    .header('etag', etag)
    .header('x-content-type-options', 'nosniff')
    // opened on its own, the SVG may style itself and nothing else
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
  const match = request.headers['if-none-match'];
  if (match?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    return reply.status(304).send();
  }
  return reply.type('image/svg+xml; charset=utf-8').send(svg);
}

/**
 * Shields-style badges: /badge/<slug>.svg or /badge/<URL-encoded server URL>.svg, with
 * ?metric=score (default), uptime (30 days) or verdict. Always an image, never an error page:
 * a README must not show a broken image because a server is unknown or the URL odd.
 */
export function badgeRoutes(app: FastifyInstance, services: Services) {
  app.get('/badge/*', { schema: { hide: true } }, async (request, reply) => {
    const metricParam = (request.query as Record<string, unknown>).metric;
    const metric: BadgeMetric = BADGE_METRICS.includes(metricParam as BadgeMetric)
      ? (metricParam as BadgeMetric)
      : 'score';
    const identifier = badgeIdentifier(request.url);
    // an identifier that is not even a URL is simply unknown; a database failure is not
    const server = identifier
      ? await services.trust.find(identifier).catch((err: unknown) => {
          if (err instanceof HttpProblem) return undefined;
          throw err;
        })
      : undefined;
    if (!server) return sendSvg(request, reply, renderBadge(metric, null), MAX_AGE_UNKNOWN);
    const trust = await services.trust.assess(server);
    const facts: BadgeFacts = {
      score: trust.score,
      verdict: trust.verdict,
      uptime30d: server.stats?.uptime.uptime_30d.ratio ?? null,
    };
    return sendSvg(request, reply, renderBadge(metric, facts), MAX_AGE_KNOWN);
  });
}
