import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The app in embedded mode (PGlite, one database session) under a few seconds of sustained
 * concurrent traffic of every kind that touches the database: trust lookups, metered agent
 * queries, registrations and reports. The load runs in a process of its own
 * (api-load-worker.ts), so a crash is a finding rather than the end of the test run.
 */

const repoRoot = path.resolve(import.meta.dirname, '../../..');

interface WorkerResult {
  statuses: Record<string, number>;
  acknowledged: number;
  stored: number;
}

function runWorker(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'apps/api/test/api-load-worker.ts'],
      {
        cwd: repoRoot,
        env: { ...process.env, LOAD_MS: '3000' },
        timeout: 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error.code as number | undefined) ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('embedded mode under sustained mixed load', () => {
  // postgres.js 3.4.9 skipped sql.begin()'s connection reservation when BEGIN filled a
  // connection's pipeline (porsager/postgres#1189); with embedded mode's single connection this
  // crashed or hung under load. patches/postgres+3.4.9.patch fixes it; this test guards it.
  it('stays up, answers no 5xx, and stores every report it acknowledged', async () => {
    const { code, stdout, stderr } = await runWorker();
    expect(code, stderr.split('\n').slice(0, 6).join('\n')).toBe(0);
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult;
    const serverErrors = Object.keys(result.statuses).filter((s) => Number(s) >= 500);
    expect(serverErrors, JSON.stringify(result.statuses)).toEqual([]);
    expect(result.acknowledged).toBeGreaterThan(0);
    expect(result.stored).toBe(result.acknowledged);
  }, 90_000);
});
