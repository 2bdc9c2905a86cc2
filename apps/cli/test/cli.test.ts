import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestRuntime } from '@observatory/service/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-process.ts';

describe('observatory start (embedded)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'obs-cli-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /api/info, stops cleanly on Ctrl-C, and finds its data on the next start', async () => {
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };
    const first = runCli(['start'], env);
    const [, url] = await first.waitFor(/listening on (http:\/\/\S+)/);
    expect(first.output()).toContain('mode: embedded');
    expect(first.output()).toContain(path.join(dataDir, 'pgdata'));
    const info = (await (await fetch(`${url}/api/info`)).json()) as { version: string; data_since: string };
    expect(info.version).toBe('1.0.0');
    first.child.kill('SIGINT');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.output()).toContain('stopped cleanly');

    const second = runCli(['start'], env);
    const [, url2] = await second.waitFor(/listening on (http:\/\/\S+)/);
    const info2 = (await (await fetch(`${url2}/api/info`)).json()) as { data_since: string };
    // data_since is the day the store was created: kept, not re-created
    expect(info2.data_since).toBe(info.data_since);
    expect(second.output()).not.toContain('database migrated');
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 90_000);
});

describe('configuration errors', () => {
  it('stop the process before it listens, one line per bad variable', async () => {
    const p = runCli(['start'], { PORT: 'http', PROBE_TIMEOUT_MS: '-5', REDIS_URL: 'nope' });
    const { code } = await p.exited;
    expect(code).toBe(1);
    const out = p.output();
    expect(out).toMatch(/^ {2}PORT: /m);
    expect(out).toMatch(/^ {2}PROBE_TIMEOUT_MS: /m);
    expect(out).toMatch(/^ {2}REDIS_URL: /m);
    expect(out).not.toContain('listening');
  });

  it('refuse to run a lone worker without shared Postgres and Redis', async () => {
    const p = runCli(['worker'], {});
    expect((await p.exited).code).toBe(1);
    expect(p.output()).toContain('needs DATABASE_URL and REDIS_URL');
  });
});

describe('distributed mode: separate scheduler and worker processes', () => {
  it('a probe scheduled by one process is run by another and stored in Postgres', async () => {
    // A target that answers HTTP but not MCP: its probe must land as not_mcp.
    const target = http.createServer((_req, res) => res.end('<html>hello</html>'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/mcp`;
    const runtime = await createTestRuntime({ redis: true });
    const scheduler = runCli(['scheduler'], runtime.childEnv);
    const worker = runCli(['worker'], { ...runtime.childEnv, METRICS_PORT: '0', HOST: '127.0.0.1' });
    try {
      await Promise.all([scheduler.waitFor(/scheduler running/), worker.waitFor(/worker running/)]);
      const { server } = await runtime.repos.servers.upsert({
        url: targetUrl,
        name: 'html page',
        category: 'other',
        source: 'registered',
      });
      let rows: Awaited<ReturnType<typeof runtime.repos.probeResults.latestForServer>> = [];
      for (let i = 0; i < 300 && rows.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        rows = await runtime.repos.probeResults.latestForServer(server.id);
      }
      expect(rows).toHaveLength(1);
      expect(rows[0]?.outcome).toBe('not_mcp');
      const after = await runtime.repos.servers.findById(server.id);
      expect(after?.last_outcome).toBe('not_mcp');
      expect(after?.consecutive_failures).toBe(1);
      // the worker serves its own counters (METRICS_PORT): the probe it ran is there
      const [, metricsUrl] = await worker.waitFor(/metrics on (http:\/\/\S+)/);
      const text = await (await fetch(metricsUrl!)).text();
      expect(text).toMatch(/observatory_probes_total\{outcome="not_mcp"\} 1/);
    } finally {
      scheduler.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      expect((await scheduler.exited).code).toBe(0);
      expect((await worker.exited).code).toBe(0);
      await runtime.close();
      target.close();
    }
  }, 90_000);
});
