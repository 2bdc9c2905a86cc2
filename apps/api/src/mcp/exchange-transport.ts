import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';

/**
 * True for the POST that makes up nearly all /mcp traffic — one JSON-RPC request (tools/call,
 * tools/list, ping), not initialize, with the headers the Streamable HTTP transport requires —
 * and for nothing else. Anything else (initialize, notifications, batches, a wrong Accept or
 * MCP-Protocol-Version header, a malformed message) goes through the SDK's transport, so every
 * refusal and edge case is the SDK's own answer.
 */
export function isPlainRequest(
  request: FastifyRequest,
): request is FastifyRequest & { body: JSONRPCRequest } {
  const accept = request.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return false;
  const version = request.headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) return false;
  return isSingleJsonRpcRequest(request.body) && request.body.method !== 'initialize';
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The SDK's JSONRPCRequestSchema (strict: jsonrpc "2.0", a string or integer id, a method,
 * optional object params) checked by hand: its zod parse cost ~20 µs a request. The server
 * parses params again against the method's own schema.
 */
function isSingleJsonRpcRequest(body: unknown): body is JSONRPCRequest {
  if (!isPlainObject(body)) return false;
  for (const key in body) if (!REQUEST_KEYS.has(key)) return false;
  const { id, params } = body;
  return (
    body.jsonrpc === '2.0' &&
    (typeof id === 'string' || Number.isInteger(id)) &&
    typeof body.method === 'string' &&
    (params === undefined ||
      (isPlainObject(params) && (params._meta === undefined || isPlainObject(params._meta))))
  );
}

interface Exchange<Context> {
  clientId: RequestId;
  context: Context;
  resolve: (response: JSONRPCMessage) => void;
}

/**
 * An SDK Transport that carries plain JSON-RPC requests from many HTTP requests to ONE
 * long-lived McpServer and each response back to its HTTP request: what the SDK's
 * WebStandardStreamableHTTPServerTransport does in JSON-response mode for such a request, minus
 * the per-request web Request/Response objects and McpServer (bench:mcp). The server still does
 * everything MCP: dispatch, argument validation, isError results, output validation. It never
 * sees initialize (see isPlainRequest), so it holds no client's state.
 *
 * Clients' request ids collide (every client counts from 0 or 1), so each exchange travels
 * through the server under an internal id and gets the client's id back on its answer. The
 * exchange's context (the HTTP request's logger) is kept under the internal id for the tools.
 *
 * Like the SDK transport in JSON mode it forwards only responses: notifications a handler sends
 * on the side (progress, logs) have no stream to go to.
 */
export class ExchangeTransport<Context> implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  #nextId = 0;
  readonly #pending = new Map<RequestId, Exchange<Context>>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only responses go back (see the class comment); this server's own messages need no zod.
    if (!('id' in message) || !('result' in message || 'error' in message)) return;
    const id = message.id as RequestId;
    const exchange = this.#pending.get(id);
    if (!exchange) return;
    this.#pending.delete(id);
    exchange.resolve({ ...message, id: exchange.clientId } as JSONRPCMessage);
  }

  /** The context of the exchange a request handler is serving (by the internal request id). */
  contextOf(requestId: RequestId): Context | undefined {
    return this.#pending.get(requestId)?.context;
  }

  /** Delivers one request to the connected server; resolves with its response, under the client's id. */
  exchange(request: JSONRPCRequest, extra: MessageExtraInfo, context: Context): Promise<JSONRPCMessage> {
    const internalId = `x${++this.#nextId}`;
    const answered = new Promise<JSONRPCMessage>((resolve) => {
      this.#pending.set(internalId, { clientId: request.id, context, resolve });
    });
    this.onmessage?.({ ...request, id: internalId }, extra);
    return answered;
  }
}
