/**
 * Tool categories. The nine named by SPEC 2.7 (the leaderboard's list), plus `other` for
 * everything else, so every server belongs to exactly one category and has a baseline to be
 * compared against.
 */
export const SPEC_CATEGORIES = [
  'weather',
  'finance',
  'code',
  'data',
  'search',
  'compliance',
  'transport',
  'productivity',
  'communication',
] as const;

export const CATEGORIES = [...SPEC_CATEGORIES, 'other'] as const;
export type Category = (typeof CATEGORIES)[number];

const KNOWN: ReadonlySet<string> = new Set(CATEGORIES);

export function isCategory(value: unknown): value is Category {
  return typeof value === 'string' && KNOWN.has(value);
}

/** Case- and whitespace-insensitive; anything unknown (or missing) is `other`. */
export function normalizeCategory(input?: string | null): Category {
  const key = (input ?? '').trim().toLowerCase();
  return isCategory(key) ? key : 'other';
}
