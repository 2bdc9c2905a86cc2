import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadUrl, type Fleet, startFleet } from '../src/index.ts';

// The testkit is checked with the SDK's own Client: if the official client is happy, the fleet's
// MCP behaviours (the lean responder included) are protocol-correct.

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet();
});
afterAll(async () => {
  await fleet?.close();
});

async function withClient<T>(transport: Transport, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'testkit-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

const streamable = (url: string) => new StreamableHTTPClientTransport(new URL(url));

describe('MCP behaviours speak MCP to the SDK Client', () => {
  it.each(['healthy', 'healthy-sse', 'stateful', 'changing-tools'] as const)(
    '%s: ping, tools/list, tools/call',
    async (b) => {
      const { url } = fleet.add(b);
      await withClient(streamable(url), async (client) => {
        await client.ping();
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toContain('echo');
        const answer = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
        expect(answer.content).toEqual([{ type: 'text', text: 'hi' }]);
      });
    },
  );

  it('legacy-sse works with the SDK SSE client transport', async () => {
    const { url } = fleet.add('legacy-sse');
    expect(url).toMatch(/\/sse$/);
    await withClient(new SSEClientTransport(new URL(url)), async (client) => {
      await client.ping();
      expect((await client.listTools()).tools).toHaveLength(2);
    });
  });

  it('no-ping answers ping with method-not-found', async () => {
    const { url } = fleet.add('no-ping');
    await withClient(streamable(url), async (client) => {
      await expect(client.ping()).rejects.toThrow(/Method not found/);
      expect((await client.listTools()).tools).toHaveLength(2);
    });
  });

  it('the lean responder lists exactly the tools the SDK servers list', async () => {
    const list = (url: string) =>
      withClient(streamable(url), async (client) => (await client.listTools()).tools);
    const lean = fleet.add('healthy');
    const sdk = fleet.add('healthy-sse');
    expect(await list(lean.url)).toEqual(await list(sdk.url));
    fleet.changeTools(lean.id);
    fleet.changeTools(sdk.id);
    const [leanV1, sdkV1] = [await list(lean.url), await list(sdk.url)];
    expect(leanV1).toEqual(sdkV1);
    expect(leanV1).toHaveLength(3);
  });

  it('the lean responder negotiates the protocol version like the SDK', async () => {
    const { url } = fleet.add('healthy');
    const init = (version: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      }).then((res) => res.json() as Promise<{ result: { protocolVersion: string } }>);
    expect((await init('2025-03-26')).result.protocolVersion).toBe('2025-03-26');
    expect((await init('1999-01-01')).result.protocolVersion).not.toBe('1999-01-01');
  });
});

describe('fleet management', () => {
  it('counts requests, per server and in total', async () => {
    const { id, url } = fleet.add('plain-ok');
    const before = fleet.stats().requests;
    await (await fetch(url)).text();
    await (await fetch(url)).text();
    expect(fleet.stats().perServer[id]).toBe(2);
    expect(fleet.stats().requests).toBe(before + 2);
  });

  it('serves non-MCP behaviours as described', async () => {
    const res = async (b: Parameters<Fleet['add']>[0]) =>
      fetch(fleet.add(b).url, { method: 'POST', body: '{}' });
    const auth = await res('auth');
    expect(auth.status).toBe(401);
    expect(auth.headers.get('www-authenticate')).toMatch(
      /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:\d+\//,
    );
    const html = await res('html');
    expect([html.status, html.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    expect((await res('http-500')).status).toBe(500);
    expect(await (await res('plain-ok')).text()).toBe('OK');
    expect(await (await res('wrong-jsonrpc')).json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { status: 'ok' },
    });
    await expect(res('dead')).rejects.toThrow();
  });

  it('removes servers and flips behaviours', async () => {
    const { id, url } = fleet.add('plain-ok');
    fleet.setBehaviour(id, 'http-500');
    expect((await fetch(url)).status).toBe(500);
    expect(fleet.remove(id)).toBe(true);
    expect((await fetch(url)).status).toBe(404);
    expect(() => fleet.setBehaviour(id, 'healthy')).toThrow(/no fleet server/);
  });

  it('deadUrl() points at a closed port', async () => {
    await expect(fetch(await deadUrl())).rejects.toThrow();
  });
});

describe('cli', () => {
  it('prints a JSON line with the fleet URLs when ready, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/testkit/src/cli.ts', '--json', 'healthy=2', 'auth=1'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const line = await new Promise<string>((resolve) =>
        createInterface({ input: child.stdout }).once('line', resolve),
      );
      const ready = JSON.parse(line) as {
        ready: boolean;
        baseUrl: string;
        servers: Array<{ url: string; behaviour: string }>;
      };
      expect(ready.ready).toBe(true);
      expect(ready.servers.map((s) => s.behaviour)).toEqual(['healthy', 'healthy', 'auth']);
      expect((await fetch(ready.servers[2]!.url, { method: 'POST' })).status).toBe(401);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
