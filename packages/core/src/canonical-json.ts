/**
 * JSON with object keys sorted at every depth, so equal values always serialize alike: the
 * basis of every hash we publish (tool-list fingerprints, audit log leaves). `undefined`
 * members are dropped, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * The value with every object's keys in sorted order. Objects and arrays already in order are
 * returned as they are, not copied: audit events are built with their keys sorted, and copying
 * them cost about a third of making each leaf's JSON (measured: 7.0 → 5.3 µs per agent-query leaf).
 */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = sortKeys(value[i]);
      if (item !== value[i] && !copy) copy = value.slice(0, i);
      copy?.push(item);
    }
    return copy ?? value;
  }
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = keys[i - 1]! < keys[i]!;
  if (inOrder) {
    // a copy only if some member changes (a nested object out of order)
    let copy: Record<string, unknown> | undefined;
    for (const [i, key] of keys.entries()) {
      const member = sortKeys(record[key]);
      if (member !== record[key] && !copy) {
        copy = {};
        for (const earlier of keys.slice(0, i)) copy[earlier] = record[earlier];
      }
      if (copy) copy[key] = member;
    }
    return copy ?? value;
  }
  const sorted: Record<string, unknown> = {};
  for (const key of keys.sort()) sorted[key] = sortKeys(record[key]);
  return sorted;
}
