import type { Baseline, Category } from '@observatory/core';
import { loadCategoryBaselines } from '../analysis/analyzer.ts';
import type { Runtime } from '../runtime.ts';

/**
 * Category baselines change every few minutes at most; reading them from Postgres on every
 * trust query would double its cost. Cached for `ttlMs`, refreshed by the first caller after.
 */
export function baselinesCache(runtime: Runtime, ttlMs = 30_000) {
  let value: Map<Category, Baseline> | null = null;
  let loadedAt = 0;
  let loading: Promise<Map<Category, Baseline>> | null = null;
  return {
    async get(): Promise<Map<Category, Baseline>> {
      if (value && Date.now() - loadedAt < ttlMs) return value;
      loading ??= loadCategoryBaselines(runtime.db.sql)
        .then((v) => {
          value = v;
          loadedAt = Date.now();
          return v;
        })
        .finally(() => {
          loading = null;
        });
      return value ?? loading;
    },
  };
}

export type BaselinesCache = ReturnType<typeof baselinesCache>;
