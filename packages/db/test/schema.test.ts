import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Database,
  listMigrations,
  migrate,
  openDatabase,
  readDataSince,
  type Sql,
} from '../src/index.ts';
import { createEmbeddedTestDatabase, createTestDatabase, type TestDatabase } from '../src/test-database.ts';

/** Tables, columns (name, type, nullability, default), indexes and functions, partitions left out. */
async function describeSchema(sql: Sql) {
  const columns = await sql`
    SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema
    WHERE c.table_schema = 'public' AND c.table_name !~ '^probe_results_[0-9]{8}$'
    ORDER BY c.table_name, c.column_name`;
  const indexes = await sql`
    SELECT tablename, indexname, indexdef FROM pg_indexes
    WHERE schemaname = 'public' AND tablename !~ '^probe_results_[0-9]{8}$'
    ORDER BY tablename, indexname`;
  const constraints = await sql`
    SELECT conrelid::regclass::text AS rel, conname, pg_get_constraintdef(oid) AS def
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype <> 'n' -- PG 18 (PGlite) lists NOT NULL here; columns cover it
      AND conrelid::regclass::text !~ '^probe_results_[0-9]{8}$'
    ORDER BY rel, conname`;
  const functions = await sql`
    SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY proname`;
  return {
    columns: [...columns],
    indexes: [...indexes],
    constraints: [...constraints],
    functions: [...functions],
  };
}

describe('migrations', () => {
  let pg: TestDatabase;
  let lite: Database;
  beforeAll(async () => {
    pg = await createTestDatabase();
    lite = await createEmbeddedTestDatabase();
  });
  afterAll(async () => {
    await pg?.drop();
    await lite?.close();
  });

  it('give the same schema on PGlite and on Postgres', async () => {
    const a = await describeSchema(pg.sql);
    const b = await describeSchema(lite.sql);
    expect(a.columns.length).toBeGreaterThan(100);
    expect(b).toEqual(a);
  });

  it('are recorded and not applied twice', async () => {
    const again = await migrate(pg.sql);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toBeGreaterThanOrEqual(1);
    const rows = await pg.sql`SELECT name FROM schema_migrations`;
    expect(rows.map((r) => r.name)).toContain('0001_init');
  });

  it('apply once when several processes migrate at the same time', async () => {
    const fresh = await createTestDatabase({ migrate: false });
    try {
      const others = await Promise.all(
        [1, 2, 3].map(() => openDatabase({ databaseUrl: fresh.url, poolMax: 2 })),
      );
      const reports = await Promise.all(others.map((o) => migrate(o.sql)));
      // each migration applied by exactly one of the three, all of them by someone
      const all = (await listMigrations()).map((m) => m.name);
      expect(reports.flatMap((r) => r.applied).sort()).toEqual(all);
      expect(reports.filter((r) => r.applied.length > 0)).toHaveLength(1);
      await Promise.all(others.map((o) => o.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('record the day the data store was created as data_since', async () => {
    expect(await readDataSince(pg.sql)).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('embedded data directory', () => {
  it('keeps data across a close and a reopen', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'obs-pgdata-'));
    try {
      const first = await openDatabase({ dataDir: dir });
      await migrate(first.sql);
      await first.sql`INSERT INTO meta (key, value) VALUES ('probe', 'kept')`;
      await first.close();

      const second = await openDatabase({ dataDir: dir });
      const [row] = await second.sql`SELECT value FROM meta WHERE key = 'probe'`;
      expect(row?.value).toBe('kept');
      expect((await migrate(second.sql)).applied).toEqual([]);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
