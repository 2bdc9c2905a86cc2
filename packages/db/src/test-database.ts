import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type Database, openDatabase } from './client.ts';
import { migrate } from './migrate.ts';

/** The admin connection tests use to create and drop their own databases. */
export const TEST_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase extends Database {
  /** URL of this test's own database, for child processes. */
  url: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database on the real Postgres, unique to the caller, dropped afterwards.
 * Tests in parallel files never see each other's rows.
 */
export async function createTestDatabase(
  opts: { migrate?: boolean; poolMax?: number } = {},
): Promise<TestDatabase> {
  const name = `obs_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(TEST_ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_ADMIN_URL);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), poolMax: opts.poolMax ?? 5 });
  if (opts.migrate !== false) await migrate(db.sql);
  return {
    ...db,
    url: url.toString(),
    async drop() {
      await db.close();
      const a = postgres(TEST_ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}

/** A fresh, migrated in-memory PGlite behind its socket, as embedded mode runs it. */
export async function createEmbeddedTestDatabase(): Promise<Database> {
  const db = await openDatabase({ dataDir: 'memory://' });
  await migrate(db.sql);
  return db;
}
