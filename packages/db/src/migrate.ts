import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from './client.ts';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../migrations');

// An arbitrary constant shared by every process of this service: whoever holds it migrates,
// the others wait and then find nothing left to do.
const MIGRATION_LOCK_KEY = 724_310_001;

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
}

export async function listMigrations(): Promise<Array<{ name: string; file: string }>> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return files.map((f) => ({ name: f.replace(/\.sql$/, ''), file: path.join(MIGRATIONS_DIR, f) }));
}

/**
 * Applies the forward-only SQL migrations not yet recorded in schema_migrations, in order,
 * each in its own transaction, under a session advisory lock so processes starting together
 * don't race.
 */
export async function migrate(sql: Sql): Promise<MigrationReport> {
  const migrations = await listMigrations();
  const reserved = await sql.reserve();
  try {
    await reserved`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    await reserved`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        name text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    const done = new Set(
      (await reserved<{ name: string }[]>`SELECT name FROM schema_migrations`).map((r) => r.name),
    );
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      const text = await readFile(m.file, 'utf8');
      // A multi-statement simple query runs as one implicit transaction: the migration and
      // its record land together or not at all. The name is safe to inline (checked by the
      // file-name pattern above).
      try {
        await reserved
          .unsafe(`${text}\n;INSERT INTO schema_migrations (name) VALUES ('${m.name}');`)
          .simple();
      } catch (err) {
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await reserved`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.catch(() => {});
    reserved.release();
  }
}
