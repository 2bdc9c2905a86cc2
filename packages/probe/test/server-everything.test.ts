import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintTools, probeWithDetails } from '../src/index.ts';

// The reference server of the MCP project, in Streamable HTTP mode (stateful, SSE answers), run
// as a child process on a free loopback port. Its PORT comes from the environment.

const serverEntry = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let child: ChildProcess;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  child = spawn(process.execPath, [serverEntry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${log}`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('listening on port')) resolve();
    });
  });
  url = `http://127.0.0.1:${port}/mcp`;
});

afterAll(() => {
  child?.kill();
});

describe('server-everything', () => {
  it('is probed up, with the tool list the SDK Client sees', async () => {
    const client = new Client({ name: 'reference', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const { tools } = await client.listTools();
    await client.close();

    const { result, details } = await probeWithDetails(url, {
      allowPrivateNetworks: true,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({
      outcome: 'up',
      error_type: null,
      transport: 'streamable_http',
      http_status: 200,
      tool_count: tools.length,
      tools_hash: fingerprintTools(tools).toolsHash,
    });
    expect(tools.length).toBeGreaterThan(5);
    expect(result.server_info?.name).toBeTruthy();
    expect(details.session_issued).toBe(true);
  });
});
