import { checkTargetUrl, normalizeServerUrl } from '@observatory/probe';
import { HttpProblem } from '../problem.ts';
import type { Runtime } from '../runtime.ts';

const CACHE_LIMIT = 50_000;

/**
 * Turns a server URL from an agent into a server id, creating a 'reported' server for a URL
 * we have not seen — after checking it is a public http(s) target (the probe will visit it).
 * Ids never change for a URL, so they are cached: the hot report path usually needs no query.
 */
export function serverResolver(runtime: Runtime) {
  const cache = new Map<string, number>();
  const remember = (url: string, id: number) => {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(url, id);
  };

  return {
    normalize(url: string): string {
      try {
        return normalizeServerUrl(url);
      } catch {
        throw new HttpProblem(400, 'Bad Request', 'server_url must be an absolute http(s) URL.', {
          errors: [{ field: 'server_url', message: 'must be an absolute URL' }],
        });
      }
    },

    /** Refuses non-public or non-http(s) targets with a 400/422 problem saying why. */
    async assertProbeable(url: string): Promise<void> {
      const verdict = await checkTargetUrl(url, {
        allowPrivateNetworks: runtime.config.PROBE_ALLOW_PRIVATE_NETWORKS,
      });
      if (!verdict.ok) {
        const status = verdict.code === 'invalid_url' || verdict.code === 'scheme_not_allowed' ? 400 : 422;
        throw new HttpProblem(status, status === 400 ? 'Bad Request' : 'Target Not Allowed', verdict.reason, {
          errors: [{ field: 'server_url', message: verdict.reason }],
          reason_code: verdict.code,
        });
      }
    },

    async resolveOrCreate(rawUrl: string): Promise<{ id: number; url: string; created: boolean }> {
      const url = this.normalize(rawUrl);
      const cached = cache.get(url);
      if (cached !== undefined) return { id: cached, url, created: false };
      const existing = await runtime.repos.servers.findByUrl(url);
      if (existing) {
        remember(url, existing.id);
        return { id: existing.id, url, created: false };
      }
      await this.assertProbeable(url);
      const { server, created } = await runtime.repos.servers.upsert({
        url,
        name: new URL(url).hostname,
        category: 'other',
        source: 'reported',
      });
      remember(url, server.id);
      return { id: server.id, url, created };
    },

    remember,
  };
}

export type ServerResolver = ReturnType<typeof serverResolver>;
