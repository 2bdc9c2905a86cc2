import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { RequestInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Services } from '@observatory/service';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ExchangeTransport, isPlainRequest } from './exchange-transport.ts';
import { createMcpServer, createToolRegistry } from './mcp-server.ts';
import { originGuard } from './origin-guard.ts';
import { AnswerMemo, responseJson } from './shared-answers.ts';
import type { ToolContext, ToolDefinition } from './tool-definition.ts';
import { MCP_TOOL_DEFINITIONS } from './tools/index.ts';

/** JSON-RPC error codes used at the HTTP edge (the SDK answers everything past it). */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;
const INTERNAL_ERROR = -32603;

export interface McpRoutesOptions {
  tools?: readonly ToolDefinition[];
  /** Serve plain single requests on one shared server (default true; tests compare with the SDK path). */
  sharedServerForPlainRequests?: boolean;
  /**
   * Answer a tools/call identical to one answered with a shared answer a moment ago (a trust
   * answer, for up to a second) with that response, not through the server again (default
   * true; bench:mcp measures without).
   */
  answerMemo?: boolean;
}

/** Errors at the HTTP edge as the transport itself answers them: a JSON-RPC error with id null. */
function sendJsonRpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply
    .status(status)
    .header('content-type', 'application/json')
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The absolute URL of the request, as the transport reports it to handlers. */
const urlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}${request.url}`;

/** Header values as the web Headers API gives them: one string per name. */
function headersOf(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/**
 * What a tool handler sees of the HTTP request (extra.requestInfo), as the SDK transport gives
 * it; the URL is parsed only if a handler reads it (none of ours does).
 */
const requestInfoOf = (request: FastifyRequest): RequestInfo => {
  let url: URL | undefined;
  return {
    headers: request.headers,
    get url() {
      url ??= new URL(urlOf(request));
      return url;
    },
  };
};

/** The Fastify request as the web Request the SDK transport reads. */
const toWebRequest = (request: FastifyRequest) =>
  new Request(urlOf(request), { method: request.method, headers: headersOf(request) });

/**
 * /mcp: MCP over Streamable HTTP, stateless, answered with plain JSON (no tool streams
 * progress). Fastify has already parsed and size-capped the body (bodyLimit), and sends the
 * answer like any other reply: one write with its length.
 *
 * Two ways through, one McpServer behaviour (the same prepared tool registry):
 * - a plain JSON-RPC request (tools/call, tools/list: nearly all traffic) goes to one
 *   long-lived McpServer through ExchangeTransport;
 * - everything else — initialize, notifications, batches, wrong headers, malformed messages —
 *   gets a fresh McpServer and the SDK's WebStandardStreamableHTTPServerTransport (the SDK's
 *   stateless pattern), so refusals and edge cases are the SDK's own answers.
 * The split is for speed: the SDK transport wraps every exchange in web Request/Response
 * objects, and with a server per request a check_trust took ~1.8× the API CPU it takes on the
 * shared server (bench:mcp: ~500 vs ~280 µs; REST ~135 µs). The Node flavour of the SDK
 * transport was slower still: it converts the raw request and streams the Response back
 * through @hono/node-server.
 *
 * A tools/call identical to one just answered with a shared answer (check_trust: the trust
 * answer /api/trust sends, current for up to a second) is answered from AnswerMemo without
 * going through the server again; its result is already JSON text (shared-answers.ts).
 *
 * No sessions, so no server-initiated stream (GET) and nothing to terminate (DELETE): both 405.
 */
export async function mcpRoutes(app: FastifyInstance, services: Services, options: McpRoutesOptions = {}) {
  const registry = createToolRegistry(options.tools ?? MCP_TOOL_DEFINITIONS);
  const originAllowed = originGuard(services.runtime.config.publicBaseUrl);

  const exchanges = new ExchangeTransport<ToolContext>();
  const fallbackContext: ToolContext = { services, log: app.log };
  const shared =
    options.sharedServerForPlainRequests === false
      ? undefined
      : createMcpServer(registry, (extra) => exchanges.contextOf(extra.requestId) ?? fallbackContext);
  const memo = options.answerMemo === false ? undefined : new AnswerMemo();
  if (shared) {
    await shared.connect(exchanges);
    app.addHook('onClose', () => shared.close());
  }

  // a callback hook (no promise per request); a refusal is the reply, so done() is not called
  const checkOrigin = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const { origin } = request.headers;
    if (originAllowed(origin)) return done();
    sendJsonRpcError(reply, 403, SERVER_ERROR, `Forbidden: Origin ${origin} is not allowed`);
  };

  // Bad JSON, a body over the limit or a wrong content type: answered in JSON-RPC terms too.
  const errorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error({ err: error }, 'MCP request failed');
      return sendJsonRpcError(reply, 500, INTERNAL_ERROR, 'Internal error');
    }
    return sendJsonRpcError(reply, status, status === 400 ? PARSE_ERROR : SERVER_ERROR, error.message);
  };

  const routeOptions = { schema: { hide: true }, onRequest: checkOrigin, errorHandler };

  app.post('/mcp', routeOptions, async (request, reply) => {
    const context: ToolContext = { services, log: request.log };
    if (shared && isPlainRequest(request)) {
      const known = memo?.answer(request.body);
      if (known !== undefined) return reply.header('content-type', 'application/json').send(known);
      const response = await exchanges.exchange(
        request.body,
        { requestInfo: requestInfoOf(request) },
        context,
      );
      const json = memo ? memo.respond(request.body, response) : responseJson(response);
      return reply.header('content-type', 'application/json').send(json);
    }
    const server = createMcpServer(registry, () => context);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(toWebRequest(request), { parsedBody: request.body });
      reply.status(response.status);
      response.headers.forEach((value, name) => {
        reply.header(name, value);
      });
      // 202 (notifications only) has no body; everything else is one JSON document.
      return reply.send(await response.text());
    } finally {
      await server.close();
    }
  });

  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    sendJsonRpcError(
      reply.header('allow', 'POST'),
      405,
      SERVER_ERROR,
      'Method not allowed: this endpoint is stateless; send JSON-RPC messages with POST.',
    );
  app.get('/mcp', routeOptions, methodNotAllowed);
  app.delete('/mcp', routeOptions, methodNotAllowed);
}
