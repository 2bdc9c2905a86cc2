import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { migrate, openDatabase } from '@observatory/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The API as users run it in embedded mode (`observatory api`, PGlite in a data dir, one
 * database session), under sustained concurrent reads and writes from 200 clients for a few
 * seconds. It runs as a child process so that a crash is a finding, not the end of the suite.
 */

const CLIENTS = 200;
const LOAD_MS = 4_000;
const REQUEST_TIMEOUT_MS = 5_000;
const SERVER_URL = 'https://load.example.com/mcp';
const repoRoot = path.resolve(import.meta.dirname, '../../..');

describe('embedded API under sustained mixed load', () => {
  let dataDir: string;
  let child: ChildProcess;
  let base: string;
  let exit: string | null = null;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'api-load-'));
    // migrated up front, so the child starts as fast as it would on a second run
    const db = await openDatabase({ dataDir });
    await migrate(db.sql);
    await db.close();
    const { DATABASE_URL: _d, REDIS_URL: _r, ...inherited } = process.env;
    child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'api'], {
      cwd: repoRoot,
      env: { ...inherited, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('exit', (code, signal) => {
      exit = `exited with ${code ?? signal}: ${stderr.trim().split('\n').slice(0, 4).join(' | ')}`;
    });
    base = await new Promise<string>((resolve, reject) => {
      child.once('exit', () => reject(new Error(exit ?? 'exited')));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /listening on (http:\/\/\S+)/.exec(line);
        if (m) resolve(m[1]!);
      });
    });
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // BUG: postgres.js 3.4.9 skips sql.begin()'s connection reservation when BEGIN is the query that
  // fills a connection's pipeline (porsager/postgres#1189, fix in PR #1218). With embedded mode's
  // single connection under load this happens within seconds: either an unhandled TypeError
  // ("reading 'queue'") kills the process, or BEGIN stays open on the session and writes hang.
  // Remove `.fails` once postgres.js is patched.
  it('stays up, answers no 5xx, and stores every report it acknowledged', async () => {
    const statuses = new Map<number | string, number>();
    const count = (key: number | string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
    let acknowledged = 0;
    const until = Date.now() + LOAD_MS;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        while (Date.now() < until && exit === null) {
          try {
            // a request that hangs is a finding too: give up on it well before the test does
            const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
            const res =
              client % 2 === 0
                ? await fetch(`${base}/api/trust?url=${encodeURIComponent(SERVER_URL)}`, { signal })
                : await fetch(`${base}/api/report`, {
                    signal,
                    method: 'POST',
                    headers: { 'content-type': 'application/json' },
                    body: JSON.stringify({
                      server_url: SERVER_URL,
                      success: client % 3 > 0,
                      latency_ms: client,
                    }),
                  });
            await res.arrayBuffer();
            count(res.status);
            if (res.status === 202) acknowledged += 1;
          } catch (err) {
            count((err as Error).message);
          }
        }
      }),
    );
    expect(exit).toBeNull();
    expect([...statuses.keys()].filter((s) => typeof s !== 'number' || s >= 500)).toEqual([]);
    expect(acknowledged).toBeGreaterThan(0);

    // stop it cleanly, then count what it stored
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    const db = await openDatabase({ dataDir });
    try {
      const [row] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM interaction_reports`;
      expect(row?.n).toBe(acknowledged);
    } finally {
      await db.close();
    }
  });
});
