import { describe, expect, it } from 'vitest';
import { CATEGORIES, isCategory, normalizeCategory, SPEC_CATEGORIES } from './categories.ts';

describe('categories', () => {
  it('holds the nine SPEC categories plus other', () => {
    expect(SPEC_CATEGORIES).toEqual([
      'weather',
      'finance',
      'code',
      'data',
      'search',
      'compliance',
      'transport',
      'productivity',
      'communication',
    ]);
    expect(CATEGORIES).toHaveLength(10);
    expect(CATEGORIES.at(-1)).toBe('other');
  });

  it('normalizes case and whitespace', () => {
    expect(normalizeCategory('Finance')).toBe('finance');
    expect(normalizeCategory('  WEATHER ')).toBe('weather');
    expect(normalizeCategory('other')).toBe('other');
  });

  it('maps unknown, empty and missing input to other', () => {
    expect(normalizeCategory('crypto')).toBe('other');
    expect(normalizeCategory('')).toBe('other');
    expect(normalizeCategory(null)).toBe('other');
    expect(normalizeCategory(undefined)).toBe('other');
    expect(normalizeCategory()).toBe('other');
  });

  it('recognizes only exact category names', () => {
    expect(isCategory('code')).toBe(true);
    expect(isCategory('Code')).toBe(false);
    expect(isCategory(3)).toBe(false);
  });
});
