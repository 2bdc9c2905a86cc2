import { checkTargetUrl, normalizeServerUrl } from '@observatory/probe';
import { HttpProblem } from '../problem.ts';
import type { Runtime } from '../runtime.ts';

const CACHE_LIMIT = 50_000;
const RAW_CACHE_LIMIT = 10_000;

/** A server as resolveOrCreate gives it. */
export interface ResolvedServer {
  id: number;
  url: string;
  created: boolean;
}

/**
 * Turns a server URL from an agent into a server id, creating a 'reported' server for a URL
 * we have not seen — after checking it is a public http(s) target (the probe will visit it).
 * Ids never change for a URL, so they are cached: the hot report path usually needs no query.
 */
export function serverResolver(runtime: Runtime, { rawUrlLimit = RAW_CACHE_LIMIT } = {}) {
  const cache = new Map<string, number>();
  const remember = (url: string, id: number) => {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(url, id);
  };
  /**
   * URLs as agents sent them, with the known server each one resolved to: reports name the same
   * servers over and over, and normalizing the URL (two URL parses) was most of resolving it.
   * Only resolutions of servers that already existed are kept (the answer then says
   * created: false, as it would the next time anyway); the entries are shared between callers:
   * read them, never change them.
   */
  const byRaw = new Map<string, ResolvedServer>();
  const rememberRaw = (rawUrl: string, resolved: ResolvedServer) => {
    if (byRaw.size >= rawUrlLimit) byRaw.delete(byRaw.keys().next().value as string);
    byRaw.set(rawUrl, resolved);
    return resolved;
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

    async resolveOrCreate(rawUrl: string): Promise<ResolvedServer> {
      const known = byRaw.get(rawUrl);
      if (known !== undefined) return known;
      const url = this.normalize(rawUrl);
      const cached = cache.get(url);
      if (cached !== undefined) return rememberRaw(rawUrl, { id: cached, url, created: false });
      const existing = await runtime.repos.servers.findByUrl(url);
      if (existing) {
        remember(url, existing.id);
        return rememberRaw(rawUrl, { id: existing.id, url, created: false });
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

    /** How many raw URLs are remembered (see byRaw). */
    get rememberedRawUrls() {
      return byRaw.size;
    },
  };
}

export type ServerResolver = ReturnType<typeof serverResolver>;
