import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { jsonRpcError, sendJson } from './http-helpers.ts';
import { callTool, type ToolDefinition, toolSet } from './tool-sets.ts';

/** MCP servers built with the official SDK, for the behaviours where protocol details matter. */

function zodShape(tool: ToolDefinition): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, property] of Object.entries(tool.inputSchema.properties)) {
    shape[key] = (property.type === 'number' ? z.number() : z.string()).describe(property.description);
  }
  return shape;
}

export interface SdkServerOptions {
  name: string;
  toolsVersion: number;
  /** false removes the ping handler, so ping gets "method not found". */
  ping: boolean;
}

export function buildSdkServer(options: SdkServerOptions): McpServer {
  const server = new McpServer({ name: options.name, version: '1.0.0' });
  for (const tool of toolSet(options.toolsVersion)) {
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: zodShape(tool) },
      async (args) => {
        const outcome = callTool(tool.name, args as Record<string, unknown>);
        return { content: [{ type: 'text', text: outcome.text }], isError: outcome.isError };
      },
    );
  }
  if (!options.ping) server.server.removeRequestHandler('ping');
  return server;
}

/** Stateless Streamable HTTP: a fresh server and transport per request, as the SDK requires. */
export async function serveStateless(
  req: IncomingMessage,
  res: ServerResponse,
  options: SdkServerOptions & { json: boolean },
): Promise<void> {
  const server = buildSdkServer(options);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: options.json,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

/** Stateful Streamable HTTP: one server and transport per Mcp-Session-Id, ended by DELETE. */
export class SdkSessions {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  get size(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse, options: SdkServerOptions): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = this.sessions.get(sessionId);
      if (!transport) {
        sendJson(res, 404, jsonRpcError(null, -32001, 'Session not found'));
        return;
      }
      await transport.handleRequest(req, res);
      return;
    }
    const server = buildSdkServer(options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
      void server.close();
    };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((transport) => transport.close()));
    this.sessions.clear();
  }
}

/** The legacy HTTP+SSE transport: GET opens the stream, POSTs to its endpoint carry messages. */
export class SdkLegacySessions {
  private readonly sessions = new Map<string, SSEServerTransport>();

  async openStream(res: ServerResponse, messagesPath: string, options: SdkServerOptions): Promise<void> {
    const server = buildSdkServer(options);
    const transport = new SSEServerTransport(messagesPath, res);
    this.sessions.set(transport.sessionId, transport);
    res.on('close', () => {
      this.sessions.delete(transport.sessionId);
      void server.close();
    });
    await server.connect(transport);
  }

  async postMessage(req: IncomingMessage, res: ServerResponse, sessionId: string | null): Promise<void> {
    const transport = sessionId === null ? undefined : this.sessions.get(sessionId);
    if (!transport) {
      sendJson(res, 404, jsonRpcError(null, -32001, 'Session not found'));
      return;
    }
    await transport.handlePostMessage(req, res);
  }
}
