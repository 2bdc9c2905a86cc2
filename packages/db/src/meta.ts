import type { Sql } from './client.ts';

/** The first day of recorded data: set when the store was created, kept from then on. */
export async function readDataSince(sql: Sql): Promise<string> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM meta WHERE key = 'data_since'`;
  return row?.value ?? new Date().toISOString().slice(0, 10);
}

/** A value of the meta table (facts about this data store). */
export async function readMeta(sql: Sql, key: string): Promise<string | undefined> {
  const [row] = await sql<{ value: string }[]>`SELECT value FROM meta WHERE key = ${key}`;
  return row?.value;
}

/** Readiness: the database answers a trivial query. */
export async function pingDatabase(sql: Sql, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const ok = await Promise.race([
      sql`SELECT 1`.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    return ok;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
