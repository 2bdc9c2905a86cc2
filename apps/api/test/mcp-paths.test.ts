import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { createServices, type Services } from '@observatory/service';
import { createTestRuntime, type TestRuntime } from '@observatory/service/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from '../src/app.ts';
import { mcpRoutes } from '../src/mcp/mcp.routes.ts';
import { createMcpServer, createToolRegistry } from '../src/mcp/mcp-server.ts';
import { defineTool, toolResult } from '../src/mcp/tool-definition.ts';
import { MCP_TOOL_DEFINITIONS } from '../src/mcp/tools/index.ts';

/**
 * The shortcuts /mcp takes for speed must not change a single answer: the prepared tools/list
 * is what McpServer would list, and plain requests on the shared server are answered exactly
 * as the SDK's own transport answers them on a fresh server.
 */

const TRACKED = 'http://127.0.0.1:9/paths';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function post(base: string, body: unknown, headers: Record<string, string> = HEADERS) {
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  // checked_at is the time of the answer: the one field that may differ between two calls
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: text.replace(/\\?"checked_at\\?":\\?"[^"\\]+\\?"/g, ''),
  };
}

describe('MCP fast paths answer as the SDK does', () => {
  let runtime: TestRuntime;
  let services: Services;
  let app: FastifyInstance;
  let sdkOnly: FastifyInstance;
  let fast: string;
  let sdk: string;

  beforeAll(async () => {
    runtime = await createTestRuntime();
    services = await createServices(runtime);
    app = await buildApp(runtime, { logRequests: false, services });
    fast = await app.listen({ host: '127.0.0.1', port: 0 });
    // The same routes with every request through the SDK transport on a fresh server.
    sdkOnly = Fastify({ bodyLimit: 64 * 1024 });
    await mcpRoutes(sdkOnly, services, { sharedServerForPlainRequests: false });
    sdk = await sdkOnly.listen({ host: '127.0.0.1', port: 0 });
    await services.reports.ingest({ server_url: TRACKED, success: true, latency_ms: 80 }, {});
  });
  afterAll(async () => {
    await sdkOnly?.close();
    await app?.close();
    await runtime?.close();
  });

  it('lists the tools exactly as McpServer lists them itself', async () => {
    const registry = createToolRegistry(MCP_TOOL_DEFINITIONS);
    const listed = [];
    for (const cachedToolList of [true, false]) {
      const server = createMcpServer(registry, () => ({ services, log: app.log }), { cachedToolList });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: 'listing-check', version: '1.0.0' });
      await client.connect(clientSide);
      listed.push(await client.listTools());
      await client.close();
    }
    expect(listed[0]!.tools).toHaveLength(10);
    expect(listed[0]).toEqual(listed[1]);
  });

  it('refuses a structured answer outside the output schema with the result McpServer gives', async () => {
    // runTool makes this check (once per shared answer) instead of McpServer (on every call)
    const outputSchema = z.object({ score: z.number() });
    const answerOf = async (server: McpServer) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: 'output-check', version: '1.0.0' });
      await client.connect(clientSide);
      const result = (await client.callTool({ name: 'check_trust', arguments: {} })) as CallToolResult;
      await client.close();
      return result;
    };
    const offSchema = defineTool({
      name: 'check_trust',
      title: 'Off schema',
      guidance: '',
      inputSchema: z.object({}),
      outputSchema,
      annotations: {},
      run: async () => ({ score: 'high' }) as unknown as { score: number },
    });
    const ours = await answerOf(
      createMcpServer(createToolRegistry([offSchema]), () => ({ services, log: app.log })),
    );
    const sdkServer = new McpServer({ name: 'sdk-check', version: '1.0.0' });
    sdkServer.registerTool('check_trust', { inputSchema: z.object({}), outputSchema }, async () =>
      toolResult({ score: 'high' }),
    );
    const theirs = await answerOf(sdkServer);
    expect(theirs.isError).toBe(true);
    expect(ours).toEqual(theirs);
  });

  it('answers plain requests on the shared server as on a fresh server behind the SDK transport', async () => {
    const call = (id: number | string, name: string, args: unknown) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'ping-1', method: 'ping' },
      call(2, 'check_trust', { server_url: TRACKED }),
      // the same call again: answered from the memo of shared answers on the shared server
      call('2-again', 'check_trust', { server_url: TRACKED }),
      call('three', 'check_trust', { server_url: 'no url' }),
      call(4, 'get_server_history', { server_url: 'http://127.0.0.1:9/unknown' }),
      call(5, 'no_such_tool', {}),
      { jsonrpc: '2.0', id: 6, method: 'resources/list' },
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 42 } },
    ];
    for (const request of requests) {
      const [a, b] = [await post(fast, request), await post(sdk, request)];
      expect(a, JSON.stringify(request)).toEqual(b);
      expect(a.status).toBe(200);
    }
  });

  it('leaves initialize, notifications, batches and bad headers or messages to the SDK transport', async () => {
    const initialize = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 't', version: '0' },
      },
    };
    const cases: Array<{ body: unknown; headers?: Record<string, string>; status: number }> = [
      { body: initialize, status: 200 },
      { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, status: 202 },
      { body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }], status: 200 },
      { body: { jsonrpc: '2.0', id: 1.5, method: 'ping' }, status: 400 },
      { body: { jsonrpc: '1.0', id: 1, method: 'ping' }, status: 400 },
      {
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: { ...HEADERS, accept: 'application/json' },
        status: 406,
      },
      {
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: { ...HEADERS, 'mcp-protocol-version': '2099-01-01' },
        status: 400,
      },
    ];
    for (const { body, headers, status } of cases) {
      const [a, b] = [await post(fast, body, headers), await post(sdk, body, headers)];
      expect(a, JSON.stringify(body)).toEqual(b);
      expect(a.status, JSON.stringify(body)).toBe(status);
    }
  });
});
