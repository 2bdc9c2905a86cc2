import type { Baseline, Category } from '@observatory/core';
import { loadCategoryBaselines } from '../analysis/analyzer.ts';
import { cachedFor } from '../cached.ts';
import type { Runtime } from '../runtime.ts';

/**
 * Category baselines change every few minutes at most; reading them from Postgres on every
 * trust query would double its cost. Cached for `ttlMs`, refreshed by the first caller after.
 */
export function baselinesCache(runtime: Runtime, ttlMs = 30_000) {
  return cachedFor<Map<Category, Baseline>>(ttlMs, () => loadCategoryBaselines(runtime.db.sql));
}

export type BaselinesCache = ReturnType<typeof baselinesCache>;
