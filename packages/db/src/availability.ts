import postgres from 'postgres';
import { settlesWithin } from './meta.ts';

/**
 * Whether Postgres answers, as seen by a watchdog on a connection of its own.
 *
 * Why: while Postgres is away, postgres.js keeps queries in its pool's queue (there is no
 * acquire timeout) and fails only one of them per reconnect attempt, so requests would hang
 * for the whole outage. With this flag, callers refuse new work at once (the API answers 503)
 * and only what was already queued waits, for at most one fast reconnect cycle.
 */
export interface DatabaseAvailability {
  /** False from the first failed check until the next good one. */
  readonly available: boolean;
  /** Resolves once the next check has run (tests, start-up). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export interface AvailabilityOptions {
  /** Pause between checks while Postgres answers. */
  intervalMs?: number;
  /** Pause between checks while it does not (recovery is noticed this fast). */
  downIntervalMs?: number;
  /** A check slower than this counts as a failure. */
  timeoutMs?: number;
  onChange?: (available: boolean) => void;
  /** A check still unsettled after this long means the client is stuck: a new one is made. */
  stuckMs?: number;
  /** Makes the watchdog's client (tests give one that can hang). */
  connect?: (databaseUrl: string, timeoutMs: number) => WatchdogClient;
}

/** What the watchdog needs of a postgres.js client. */
export interface WatchdogClient {
  (strings: TemplateStringsArray, ...values: unknown[]): PromiseLike<unknown>;
  end(options: { timeout: number }): Promise<void>;
}

function connectWatchdog(databaseUrl: string, timeoutMs: number): WatchdogClient {
  return postgres(databaseUrl, {
    max: 1,
    connect_timeout: Math.ceil(timeoutMs / 1000),
    idle_timeout: 0,
    // retry the connection every 100 ms: this client exists to notice recovery quickly
    backoff: () => 0.1,
    onnotice: () => {},
    connection: { application_name: 'mcp-trust-observatory-watchdog' },
  }) as unknown as WatchdogClient;
}

export function watchAvailability(databaseUrl: string, opts: AvailabilityOptions = {}): DatabaseAvailability {
  const intervalMs = opts.intervalMs ?? 1_000;
  const downIntervalMs = opts.downIntervalMs ?? 250;
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const stuckMs = opts.stuckMs ?? 5 * timeoutMs;
  const connect = opts.connect ?? connectWatchdog;
  let sql = connect(databaseUrl, timeoutMs);
  let available = true;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: Array<() => void> = [];

  // A check that timed out may still sit in the client's queue: never stack another behind it.
  let pending = false;
  let pendingSince = 0;

  async function check() {
    let ok = false;
    if (pending && Date.now() - pendingSince >= stuckMs) {
      // A check that never settles: seen in the Postgres-restart fault test, where postgres.js
      // kept a query on a connection lost mid-restart, and the API refused everything with 503
      // long after Postgres was back. Start over on a new client. (Most likely the driver bug
      // fixed in patches/postgres+3.4.9.patch: a query sent between a socket's 'error' and its
      // 'close' was never settled. This stays as a guard.)
      const stuck = sql;
      sql = connect(databaseUrl, timeoutMs);
      pending = false;
      stuck.end({ timeout: 0 }).catch(() => {});
    }
    if (!pending) {
      pending = true;
      pendingSince = Date.now();
      const query = Promise.resolve(sql`SELECT 1`);
      query.then(
        () => (pending = false),
        () => (pending = false),
      );
      ok = await settlesWithin(query, timeoutMs);
    }
    if (stopped) return;
    if (ok !== available) {
      available = ok;
      opts.onChange?.(ok);
    }
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
    timer = setTimeout(check, ok ? intervalMs : downIntervalMs);
    timer.unref();
  }
  void check();

  return {
    get available() {
      return available;
    },
    settled: () => new Promise((resolve) => waiters.push(resolve)),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      for (const resolve of waiters) resolve();
      await sql.end({ timeout: 1 });
    },
  };
}
