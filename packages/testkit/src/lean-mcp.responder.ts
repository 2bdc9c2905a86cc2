import type { IncomingMessage, ServerResponse } from 'node:http';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcError, readBody, sendJson, sendText } from './http-helpers.ts';
import { callTool, toolSet } from './tool-sets.ts';

/**
 * A minimal, protocol-correct MCP server for Streamable HTTP in stateless JSON mode: initialize
 * (with version negotiation), ping, tools/list, tools/call, notifications. It exists because the
 * SDK's stateless mode builds a McpServer and a transport (plus a Web Request/Response round trip
 * through @hono/node-server) for every HTTP request, which costs several times the CPU of the
 * prober it is meant to load: benchmarks pushing hundreds of probes per second would measure the
 * testkit instead of the prober. Behaviours that test protocol details still use the SDK.
 */

const toolsJsonByVersion = new Map<number, string>();

function toolsListJson(version: number): string {
  let json = toolsJsonByVersion.get(version);
  if (json === undefined) {
    json = JSON.stringify({ tools: toolSet(version) });
    toolsJsonByVersion.set(version, json);
  }
  return json;
}

export interface LeanServerState {
  name: string;
  toolsVersion: number;
}

function resultBody(id: string | number, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

interface JsonRpcMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

export async function respondLean(
  req: IncomingMessage,
  res: ServerResponse,
  state: LeanServerState,
): Promise<void> {
  if (req.method !== 'POST') {
    // No standalone event stream and no sessions: the spec answer is 405.
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  if (!(req.headers['content-type'] ?? '').includes('application/json')) {
    sendJson(res, 415, jsonRpcError(null, -32000, 'Content-Type must be application/json'));
    return;
  }
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') && !accept.includes('*/*')) {
    sendJson(res, 406, jsonRpcError(null, -32000, 'Client must accept application/json'));
    return;
  }
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    sendJson(res, 400, jsonRpcError(null, -32000, `Unsupported protocol version ${version}`));
    return;
  }
  const text = await readBody(req);
  if (text === null) {
    sendJson(res, 413, jsonRpcError(null, -32600, 'Request body too large'));
    return;
  }
  let message: JsonRpcMessage;
  try {
    message = JSON.parse(text) as JsonRpcMessage;
  } catch {
    sendJson(res, 400, jsonRpcError(null, -32700, 'Parse error'));
    return;
  }
  if (
    typeof message !== 'object' ||
    message === null ||
    Array.isArray(message) ||
    message.jsonrpc !== '2.0'
  ) {
    sendJson(res, 400, jsonRpcError(null, -32600, 'Invalid Request'));
    return;
  }
  const { id, method } = message;
  if (id === undefined || typeof method !== 'string') {
    // A notification, or a response to a request we never sent: accepted, nothing to say.
    res.writeHead(202).end();
    return;
  }
  if (typeof id !== 'string' && typeof id !== 'number') {
    sendJson(res, 400, jsonRpcError(null, -32600, 'Invalid Request'));
    return;
  }
  const params = (
    typeof message.params === 'object' && message.params !== null ? message.params : {}
  ) as Record<string, unknown>;
  switch (method) {
    case 'initialize': {
      const requested = params.protocolVersion;
      const agreed =
        typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
          ? requested
          : LATEST_PROTOCOL_VERSION;
      const result = {
        protocolVersion: agreed,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: state.name, version: '1.0.0' },
      };
      sendJson(res, 200, resultBody(id, JSON.stringify(result)));
      return;
    }
    case 'ping':
      sendJson(res, 200, resultBody(id, '{}'));
      return;
    case 'tools/list':
      sendJson(res, 200, resultBody(id, toolsListJson(state.toolsVersion)));
      return;
    case 'tools/call': {
      const args = (
        typeof params.arguments === 'object' && params.arguments !== null ? params.arguments : {}
      ) as Record<string, unknown>;
      const outcome = callTool(String(params.name), args);
      const result = { content: [{ type: 'text', text: outcome.text }], isError: outcome.isError };
      sendJson(res, 200, resultBody(id, JSON.stringify(result)));
      return;
    }
    default:
      sendText(res, 200, 'application/json', jsonRpcError(id, -32601, `Method not found: ${method}`));
  }
}
