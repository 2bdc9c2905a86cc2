import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  candidateFrom,
  parseRegistryDocument,
  RegistryFormatError,
} from '../src/commands/registry-format.ts';
import { REPO_ROOT, runCli } from './cli-process.ts';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const LIST = path.join(FIXTURES, 'registry-servers.json');
const SINGLE = path.join(FIXTURES, 'server.json');

describe('the MCP Registry formats', () => {
  it('reads a /v0/servers list response, its wrapped entries and their _meta', async () => {
    const entries = parseRegistryDocument(JSON.parse(await readFile(LIST, 'utf8')));
    expect(entries).toHaveLength(16);
    const first = entries[0]!;
    expect(first.ok && first.server).toMatchObject({
      name: 'io.github.acme/weather',
      title: 'Acme Weather',
      status: 'active',
      isLatest: true,
      repositoryUrl: 'https://github.com/acme/weather-mcp',
    });
    expect(entries.at(-1)).toEqual({ ok: false, label: 'entry #16', reason: 'not a server object' });
  });

  it('reads a single server.json', async () => {
    const [entry] = parseRegistryDocument(JSON.parse(await readFile(SINGLE, 'utf8')));
    expect(entry?.ok && candidateFrom(entry.server)).toMatchObject({
      ok: true,
      url: 'https://76.76.21.21/mcp',
      name: 'Solo Calendar',
      githubUrl: 'https://github.com/solo/calendar-mcp',
    });
  });

  it('prefers the streamable-http remote and fills URL templates from variable defaults', () => {
    const base = {
      name: 'x/y',
      title: null,
      description: null,
      repositoryUrl: null,
      status: null,
      isLatest: null,
    };
    const remote = (type: string, url: string, variables = {}) => ({ type, url, variables });
    expect(
      candidateFrom({
        ...base,
        remotes: [remote('sse', 'https://a.example/sse'), remote('streamable-http', 'https://a.example/mcp')],
      }),
    ).toMatchObject({ ok: true, url: 'https://a.example/mcp' });
    expect(
      candidateFrom({
        ...base,
        remotes: [
          remote('streamable-http', 'https://{host}:{port}/mcp', {
            host: { default: 'h.example' },
            port: { default: '8443' },
          }),
        ],
      }),
    ).toMatchObject({ ok: true, url: 'https://h.example:8443/mcp' });
  });

  it('refuses documents of another shape', () => {
    expect(() => parseRegistryDocument({ hello: 'world' })).toThrow(RegistryFormatError);
    expect(() => parseRegistryDocument(42)).toThrow(RegistryFormatError);
  });
});

describe('observatory import', () => {
  let runtime: TestRuntime;
  let env: Record<string, string>;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    // the real address policy: private and loopback targets are refused
    env = { ...runtime.childEnv, PROBE_ALLOW_PRIVATE_NETWORKS: 'false' };
    // an owner registered this one before the import: their details must stay
    await runtime.repos.servers.upsert({
      url: 'https://9.9.9.9/mcp',
      name: 'Owner Named',
      category: 'productivity',
      source: 'registered',
    });
  });

  afterAll(async () => {
    await runtime?.close();
  });

  it('adds servers from a registry list, and says why each bad entry was skipped', async () => {
    const cli = runCli(['import', LIST, '--category', 'weather'], env);
    expect((await cli.exited).code).toBe(0);
    const out = cli.output();
    // not a terminal: a plain summary, no progress bar
    expect(out).not.toContain('importing [');
    expect(out).toContain(`Imported ${LIST}: 16 entries`);
    expect(out).toMatch(/^ {2}added {4}3$/m);
    expect(out).toMatch(/^ {2}updated {2}0$/m);
    expect(out).toMatch(/^ {2}skipped {2}13$/m);
    for (const line of [
      '- com.example/legacy-files: older version of the same server',
      "- io.github.owner/registered-already: registered by its owner (owner's details kept)",
      '- io.github.tenant/per-tenant: URL template without default values',
      '- io.modelcontextprotocol/filesystem: no remote (local package only)',
      '- com.example/websocket-only: no streamable-http or sse remote',
      '- com.example/ftp: not an http(s) URL',
      '- com.example/space-in-host: invalid URL',
      '- com.example/intranet: private or reserved address',
      '- com.example/loopback: private or reserved address',
      '- io.github.copycat/weather: duplicate of io.github.acme/weather',
      '- com.example/retired: deleted in the registry',
      '- entry #15: missing name',
      '- entry #16: not a server object',
    ]) {
      expect(out).toContain(line);
    }
    expect(out).toMatch(/^ {5}2 {2}private or reserved address$/m);

    const acme = await runtime.repos.servers.findByUrl('https://93.184.215.14/mcp');
    expect(acme).toMatchObject({
      name: 'Acme Weather',
      slug: 'acme-weather',
      source: 'imported',
      category: 'weather',
      description: 'Forecasts and severe-weather alerts.',
      github_url: 'https://github.com/acme/weather-mcp',
    });
    // new servers are due for their first probe at once
    expect(acme!.next_probe_at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await runtime.repos.servers.findByUrl('https://1.1.1.1/sse')).toMatchObject({
      name: 'com.example/legacy-files',
      description: 'Files over the old HTTP+SSE transport, now with search.',
    });
    expect(await runtime.repos.servers.findByUrl('https://8.8.4.4/mcp')).toMatchObject({
      name: 'Remote Weather',
    });
    expect(await runtime.repos.servers.findByUrl('https://9.9.9.9/mcp')).toMatchObject({
      name: 'Owner Named',
      source: 'registered',
    });
    expect(await runtime.repos.servers.count()).toBe(4);
  }, 60_000);

  it('is idempotent: a second import changes nothing and says so (JSON output)', async () => {
    const cli = runCli(['import', LIST, '--category', 'weather', '--json'], env);
    expect((await cli.exited).code).toBe(0);
    const { outcomes } = JSON.parse(cli.output()) as {
      outcomes: Array<{ label: string; status: string; reason?: string }>;
    };
    expect(outcomes).toHaveLength(16);
    expect(outcomes.filter((o) => o.status === 'added')).toEqual([]);
    expect(
      outcomes
        .filter((o) => o.reason === 'already imported, unchanged')
        .map((o) => o.label)
        .sort(),
    ).toEqual(['com.example/legacy-files', 'io.github.acme/weather', 'io.github.user/remote-weather']);
    expect(await runtime.repos.servers.count()).toBe(4);
  }, 60_000);

  it('reads a server.json from stdin', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'apps/cli/src/main.ts'), 'import', '-'],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stdin.end(await readFile(SINGLE));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toContain('Imported stdin: 1 entry');
    expect(out).toMatch(/^ {2}added {4}1$/m);
    expect(await runtime.repos.servers.findByUrl('https://76.76.21.21/mcp')).toMatchObject({
      name: 'Solo Calendar',
      source: 'imported',
      category: 'other',
    });
  }, 60_000);

  it('refuses a file that is not registry JSON, before touching the database', async () => {
    const notJson = runCli(['import', path.join(FIXTURES, '../import.test.ts')], env);
    expect((await notJson.exited).code).toBe(1);
    expect(notJson.output()).toMatch(/^cannot import .*import\.test\.ts: /m);
  }, 60_000);
});
