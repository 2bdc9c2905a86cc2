import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import postgres from 'postgres';
import { type DatabaseAvailability, watchAvailability } from './availability.ts';

export type Sql = postgres.Sql;
/** A pool or a transaction: what repository functions that may run inside `sql.begin` take. */
export type SqlOrTx = postgres.Sql | postgres.TransactionSql;

/** Runs `fn` in a transaction: a new one on a pool, the caller's own when `sql` already is one. */
export function inTransaction<T>(sql: SqlOrTx, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return 'begin' in sql ? (sql.begin(fn) as Promise<T>) : fn(sql);
}

/**
 * A transaction sent as a pipeline on a reserved connection, without a round trip of its own for
 * BEGIN or COMMIT: `body` queues its statements (run in the order they were queued, each after
 * the one before has finished) and awaits only what it needs to read, then hands back the
 * statements still in flight; COMMIT goes right behind them. So a batch whose body needs one
 * answer from the database costs two round trips in all, not four or more.
 *
 * When a statement fails, Postgres refuses the rest of the transaction and answers the COMMIT
 * with a rollback; the caller gets the first failure (its SQLSTATE intact) and nothing is kept.
 * Only a transaction whose every statement succeeded and whose COMMIT reports COMMIT resolves.
 */
export async function pipelinedTransaction<T>(
  sql: Sql,
  body: (tx: postgres.TransactionSql) => Promise<{ result: T; inFlight: Array<Promise<unknown>> }>,
): Promise<T> {
  const reserved = await sql.reserve();
  // postgres.js gives a reserved connection no `begin` (its types say otherwise; a test here
  // pins it), so to inTransaction it passes for the transaction it is: code that would open
  // one of its own runs its statements in this one instead of sending a nested BEGIN.
  const tx = reserved as unknown as postgres.TransactionSql;
  try {
    const begun = reserved`BEGIN`.execute();
    // Observed from the start: if the connection drops, BEGIN fails while the body may still be
    // waiting (on the signing worker, say), and an unobserved rejection would end the process.
    // Its error still reaches the caller, through the body's statements or the Promise.all below.
    begun.catch(() => {});
    const { result, inFlight } = await body(tx);
    const commit = reserved`COMMIT`.execute();
    // all of them awaited together, so none can fail unobserved
    const [committed] = await Promise.all([commit, begun, ...inFlight]);
    if (committed.command !== 'COMMIT') throw new Error(`the transaction ended with ${committed.command}`);
    return result;
  } catch (err) {
    // a failure before the COMMIT was queued leaves the transaction open (or aborted): end it
    await reserved`ROLLBACK`.catch(() => {});
    throw err;
  } finally {
    reserved.release();
  }
}

export interface Database {
  sql: Sql;
  mode: 'embedded' | 'postgres';
  /** Where the data lives, for start-up messages (no credentials). */
  location: string;
  /**
   * False while the watchdog (see `watchAvailability` option) finds Postgres away: refuse new
   * work at once instead of queueing it. Always true when not watched, and in embedded mode.
   */
  available(): boolean;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** A postgres:// URL; unset → embedded PGlite. */
  databaseUrl?: string | undefined;
  /** Embedded: data lives in `${dataDir}/pgdata`; 'memory://' keeps it in memory (tests). */
  dataDir?: string;
  /** Pool size for a real Postgres. Embedded is always exactly one connection. */
  poolMax?: number;
  /** Called for server notices; silent by default. */
  onNotice?: (notice: postgres.Notice) => void;
  /** A real Postgres: watch it on a connection of its own, so available() can say it is away. */
  watchAvailability?: boolean;
  onAvailabilityChange?: (available: boolean) => void;
}

// int8 (bigint) arrives as a string by default; every bigint we store (ids, counts, leaf
// indexes) stays far below 2^53, so numbers are the honest JS type.
const bigintAsNumber = {
  to: 20,
  from: [20],
  serialize: (x: number | bigint) => x.toString(),
  parse: (x: string) => Number(x),
};

function clientOptions(max: number, onNotice?: (n: postgres.Notice) => void) {
  return {
    max,
    onnotice: onNotice ?? (() => {}),
    types: { bigint: bigintAsNumber },
    // Fail fast when the database is away instead of queueing forever; callers answer 503.
    connect_timeout: 10,
    // The rollup statements touch many partitions, so their cost estimates pass jit_above_cost
    // and every small pass would spend a second compiling; they are I/O and hashing, not JIT work.
    connection: { jit: 'off', application_name: 'mcp-trust-observatory' },
    idle_timeout: 60,
    max_lifetime: 60 * 30,
    // Reconnect within half a second once Postgres is back (the default backs off to 20 s,
    // which kept the API refusing long after a restart had finished).
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
  } satisfies postgres.Options<Record<string, postgres.PostgresType>>;
}

/**
 * One postgres.js code path for both modes. Embedded mode runs PGlite (real Postgres in WASM)
 * behind pglite-socket on an OS-chosen loopback port. PGlite is a single session, so the
 * pool is exactly one connection: postgres.js queues the rest, and `sql.begin` reserves it so
 * transactions never interleave.
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  if (options.databaseUrl) {
    const sql = postgres(options.databaseUrl, clientOptions(options.poolMax ?? 10, options.onNotice));
    const u = new URL(options.databaseUrl);
    const watchdog: DatabaseAvailability | null = options.watchAvailability
      ? watchAvailability(options.databaseUrl, { onChange: options.onAvailabilityChange })
      : null;
    return {
      sql,
      mode: 'postgres',
      location: `${u.protocol}//${u.hostname}:${u.port || 5432}${u.pathname}`,
      available: () => watchdog?.available ?? true,
      async close() {
        await watchdog?.stop();
        await sql.end({ timeout: 5 });
      },
    };
  }

  const dataDir = options.dataDir ?? './.observatory';
  const inMemory = dataDir.startsWith('memory://');
  const pgdata = inMemory ? dataDir : path.resolve(dataDir, 'pgdata');
  if (!inMemory) await mkdir(pgdata, { recursive: true });
  const pglite = await PGlite.create(pgdata);
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const conn = server.getServerConn(); // "127.0.0.1:<port>"
  const sql = postgres(`postgres://postgres@${conn}/postgres`, clientOptions(1, options.onNotice));
  let closed = false;
  return {
    sql,
    mode: 'embedded',
    location: pgdata,
    // in-process: it cannot be away while this process runs
    available: () => true,
    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
      await server.stop();
      // Closing PGlite flushes and checkpoints, so the data dir is consistent after Ctrl-C.
      await pglite.close();
    },
  };
}
