/**
 * Throwaway Postgres and Redis servers on their own loopback ports and temp directories, for
 * fault tests and soak runs that stop, kill and restart them without disturbing the machine's
 * own services (or other test files).
 *
 * Postgres: initdb into a temp dir (trust auth, user `postgres`), started and stopped with
 * pg_ctl. initdb refuses to run as root, so as root every Postgres command runs as the
 * `postgres` system user (runuser) on a directory it owns. Binaries: $PG_BIN, else the newest
 * /usr/lib/postgresql/<version>/bin, else PATH.
 *
 * Redis: `redis-server` as a child process, no RDB snapshots, AOF on or off as asked.
 *
 * A process-exit hook stops whatever is still running, so a crashed test leaves nothing behind.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cleanups = new Set<() => void>();
process.once('exit', () => {
  for (const cleanup of cleanups) cleanup();
});

export interface ThrowawayPostgres {
  readonly port: number;
  /** The server log (deadlock reports, crash recovery…), for diagnosing a failed run. */
  readonly logFile: string;
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust auth). */
  urlFor(database: string): string;
  /** Creates a database (no-op if it exists) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** pg_ctl stop: `fast` rolls back sessions and checkpoints; `immediate` is a crash (recovery on start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (immediate) and removes its directory. */
  destroy(): Promise<void>;
}

export interface ThrowawayRedis {
  readonly port: number;
  readonly url: string;
  /** SIGTERM: a clean shutdown (AOF flushed when on). */
  stop(): Promise<void>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (AOF, if on, is replayed). */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function postgresBin(name: string): string {
  if (process.env.PG_BIN) return path.join(process.env.PG_BIN, name);
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', name)))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin', name);
  }
  return name;
}

const isRoot = () => process.getuid?.() === 0;

/** A Postgres tool's command line, run as the `postgres` user when we are root (initdb and postgres refuse root). */
function pgCommand(name: string, args: string[]): [string, string[]] {
  return isRoot()
    ? ['runuser', ['-u', 'postgres', '--', postgresBin(name), ...args]]
    : [postgresBin(name), args];
}

async function pgTool(name: string, args: string[]): Promise<string> {
  const { stdout } = await run(...pgCommand(name, args), { timeout: 60_000 });
  return stdout;
}

function pgToolSync(name: string, args: string[]) {
  execFileSync(...pgCommand(name, args), { stdio: 'ignore', timeout: 30_000 });
}

/** A free loopback port from a random point of [base, base + 1000), so parallel runs rarely collide. */
export async function freePort(base: number): Promise<number> {
  const start = base + Math.floor(Math.random() * 1000);
  for (let i = 0; i < 1000; i++) {
    const port = base + ((start - base + i) % 1000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in [${base}, ${base + 1000})`);
}

/**
 * Picks a free port from [base, base + 1000) and starts a server on it; the port is chosen
 * before starting, so retry on a port another run took in between.
 */
async function startOnFreePort(base: number, start: (port: number) => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort(base);
    try {
      return await start(port);
    } catch (err) {
      if (attempt >= 4) throw err;
    }
  }
}

function ownedTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  if (isRoot()) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  return dir;
}

export async function startThrowawayPostgres(
  opts: { settings?: Record<string, string | number> } = {},
): Promise<ThrowawayPostgres> {
  const dir = ownedTempDir('obs-pg-');
  const data = path.join(dir, 'data');
  await pgTool('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  const settings = {
    max_connections: 200,
    // after a crash, sync the data dir with one syncfs() instead of an fsync per file (seconds faster)
    recovery_init_sync_method: 'syncfs',
    ...opts.settings,
  };
  let port = 0;
  let running = false;

  const start = async () => {
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`),
    ].join(' ');
    await pgTool('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      options,
      'start',
    ]);
    running = true;
  };
  const stopSync = () => {
    if (!running) return;
    try {
      pgToolSync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    } catch {}
    running = false;
  };

  await startOnFreePort(55_432, (p) => {
    port = p;
    return start();
  });
  const cleanup = () => {
    stopSync();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(cleanup);

  const urlFor = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    logFile: path.join(dir, 'server.log'),
    urlFor,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      const psql = (...args: string[]) =>
        pgTool('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', ...args]);
      const exists = await psql('-tAc', `SELECT 1 FROM pg_database WHERE datname = '${name}'`);
      if (!exists.trim()) await psql('-c', `CREATE DATABASE ${name}`);
      return urlFor(name);
    },
    async stop(mode) {
      await pgTool('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    start,
    async destroy() {
      cleanups.delete(cleanup);
      cleanup();
    },
  };
}

/** Resolves once `redis-server` on `port` answers PING. */
async function redisReady(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (pong) return;
    if (Date.now() > deadline) throw new Error(`redis on ${port} did not answer PING in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startThrowawayRedis(opts: { appendonly?: boolean } = {}): Promise<ThrowawayRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'obs-redis-'));
  let port = 0;
  let child: ChildProcess | null = null;
  let log = '';

  const start = async () => {
    log = '';
    const proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        opts.appendonly ? 'yes' : 'no',
        '--appendfsync',
        'everysec',
        '--maxmemory-policy',
        'noeviction',
        '--dir',
        dir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout?.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-4000);
    });
    proc.stderr?.on('data', (d: Buffer) => {
      log = (log + d.toString()).slice(-4000);
    });
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${log}`))),
    );
    exited.catch(() => {});
    await Promise.race([redisReady(port, 10_000), exited]);
  };
  const halt = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    await gone;
    child = null;
  };

  await startOnFreePort(56_432, (p) => {
    port = p;
    return start();
  });
  const cleanup = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(cleanup);

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    start,
    async destroy() {
      cleanups.delete(cleanup);
      await halt('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
