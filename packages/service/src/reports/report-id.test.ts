import { describe, expect, it } from 'vitest';
import { undashedRandomUuid } from './report-ingest.service.ts';

describe('undashedRandomUuid', () => {
  it('gives version 4 UUIDs without dashes, as randomUUID does, distinct across pool refills', () => {
    const ids = Array.from({ length: 2_000 }, () => undashedRandomUuid());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // every hex digit of the random part turns up in every random position
    for (const position of [0, 11, 13, 17, 31]) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
