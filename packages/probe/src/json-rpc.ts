import { JSONRPCErrorResponseSchema, JSONRPCResultResponseSchema } from '@modelcontextprotocol/sdk/types.js';
import type { EventSourceMessage } from 'eventsource-parser';
import { readCapped, sseEvents } from './body-reader.ts';
import { failureForStatus } from './http-status.ts';
import { ProbeFailure } from './probe-failure.ts';
import type { HttpReply } from './probe-http.ts';
import { headerValue } from './probe-http.ts';

/** A JSON-RPC answer to one of our requests: a result object or an error. */
export type RpcReply =
  | { kind: 'result'; result: Record<string, unknown> }
  | { kind: 'error'; code: number; message: string };

/** Headers every MCP POST carries: we can take either a JSON body or an event stream back. */
export const MCP_POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

export function requestBody(id: number, method: string, params?: Record<string, unknown>): string {
  return JSON.stringify(
    params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params },
  );
}

export function notificationBody(method: string): string {
  return JSON.stringify({ jsonrpc: '2.0', method });
}

/**
 * The response to request `id` inside a decoded message (a single message or, from servers of
 * the 2025-03-26 era, a batch), validated with the SDK's own JSON-RPC schemas. Null when the
 * payload holds other traffic only (server notifications or requests on a stream).
 */
export function findResponse(payload: unknown, id: number): RpcReply | null {
  const messages: unknown[] = Array.isArray(payload) ? payload : [payload];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null || (message as { id?: unknown }).id !== id) continue;
    const result = JSONRPCResultResponseSchema.safeParse(message);
    if (result.success) return { kind: 'result', result: result.data.result };
    const error = JSONRPCErrorResponseSchema.safeParse(message);
    if (error.success)
      return { kind: 'error', code: error.data.error.code, message: error.data.error.message };
    throw new ProbeFailure('invalid_response', `answer to request ${id} is not a JSON-RPC 2.0 response`);
  }
  return null;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProbeFailure('invalid_response', `${what} is not JSON`);
  }
}

/**
 * The JSON-RPC message an SSE event carries, or undefined for events that carry none: other event
 * types, empty priming events (servers with resumable streams send one first) and data that is
 * not JSON, which the SDK client skips too; a stream that never answers still fails.
 */
export function eventPayload(event: EventSourceMessage): unknown {
  if (event.event !== undefined && event.event !== 'message') return undefined;
  if (event.data.trim() === '') return undefined;
  try {
    return JSON.parse(event.data);
  } catch {
    return undefined;
  }
}

/**
 * Reads the answer to request `id` from a Streamable HTTP POST reply: a JSON body or an event
 * stream (read until the matching response, then closed). Non-2xx statuses become failures.
 */
export async function readRpcReply(reply: HttpReply, id: number, maxBodyBytes: number): Promise<RpcReply> {
  if (reply.status < 200 || reply.status >= 300) {
    await reply.body.dump();
    throw failureForStatus(reply.status, reply.headers);
  }
  const contentType = (headerValue(reply.headers, 'content-type') ?? '').toLowerCase();
  if (contentType.startsWith('application/json')) {
    const body = await readCapped(reply.body, maxBodyBytes);
    const found = findResponse(parseJson(body.toString('utf8'), 'response body'), id);
    if (!found)
      throw new ProbeFailure(
        'invalid_response',
        `no JSON-RPC response with id ${id} in the body`,
        reply.status,
      );
    return found;
  }
  if (contentType.startsWith('text/event-stream')) {
    let unreadable = 0;
    for await (const event of sseEvents(reply.body, maxBodyBytes)) {
      const payload = eventPayload(event);
      if (payload === undefined) {
        if (event.data.trim() !== '') unreadable += 1;
        continue;
      }
      const found = findResponse(payload, id);
      if (found) return found;
    }
    const note = unreadable ? ` (${unreadable} events were not JSON)` : '';
    throw new ProbeFailure(
      'invalid_response',
      `event stream ended without a response to request ${id}${note}`,
      reply.status,
    );
  }
  await reply.body.dump();
  const shown = contentType ? contentType.split(';')[0] : 'no content-type';
  throw new ProbeFailure(
    'invalid_response',
    `HTTP ${reply.status} with ${shown}, not JSON-RPC`,
    reply.status,
  );
}
