import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rollupsRepository } from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/test-database.ts';

describe('dirty marks', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ poolMax: 1 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  const at = (hh: number, mm: number, ss = 0) => new Date(Date.UTC(2026, 10, 1, hh, mm, ss));
  // a report batch: many reports about one server in one hour, a few about others, across hours
  const batch = [
    ...Array.from({ length: 200 }, (_, i) => ({ server_id: 1, hour: at(10, Math.floor(i / 4), i % 60) })),
    { server_id: 1, hour: at(11, 0) },
    { server_id: 2, hour: at(10, 59, 59) },
    { server_id: 2, hour: at(10, 59, 59) },
    { server_id: 3, hour: at(10, 20) },
    { server_id: 3, hour: at(10, 40) },
  ];

  async function marked(timeZone: string) {
    await db.sql`DELETE FROM rollup_dirty`;
    const rows = await db.sql.begin(async (tx) => {
      await tx`SELECT set_config('TimeZone', ${timeZone}, true)`;
      await rollupsRepository(tx).markDirty(batch);
      return tx<{ server_id: number; hour: Date }[]>`
        SELECT server_id::int, hour FROM rollup_dirty ORDER BY server_id, hour`;
    });
    return rows.map((r) => `${r.server_id} ${r.hour.toISOString()}`);
  }

  it('are the distinct (server, hour) pairs of a batch, one row each', async () => {
    expect(await marked('UTC')).toEqual([
      '1 2026-11-01T10:00:00.000Z',
      '1 2026-11-01T11:00:00.000Z',
      '2 2026-11-01T10:00:00.000Z',
      '3 2026-11-01T10:00:00.000Z',
    ]);
  });

  it('are hours of the session time zone, as the rollups are, even where it is off by half an hour', async () => {
    // Asia/Kolkata is UTC+5:30: 10:20 and 10:40 UTC are 15:50 and 16:10 there, two hours
    expect(await marked('Asia/Kolkata')).toEqual([
      '1 2026-11-01T09:30:00.000Z',
      '1 2026-11-01T10:30:00.000Z',
      '2 2026-11-01T10:30:00.000Z',
      '3 2026-11-01T09:30:00.000Z',
      '3 2026-11-01T10:30:00.000Z',
    ]);
  });
});
