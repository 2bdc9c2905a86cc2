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
export function pingDatabase(sql: Sql, timeoutMs = 2000): Promise<boolean> {
  return settlesWithin(sql`SELECT 1`, timeoutMs);
}

/** True if `query` succeeds within `timeoutMs`; false if it fails or is still pending then. */
export async function settlesWithin(query: PromiseLike<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve(query).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
