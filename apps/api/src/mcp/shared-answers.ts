import type { CallToolResult, JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

/**
 * Tool answers shared between calls. A trust answer serves every ask about its server for up to
 * a second (the trust service's cache); a tool that returns one marks it with `shareAnswer`,
 * giving the JSON text it was made with and until when it may be given. Its tool result, its
 * output check and its JSON are then made once, not per call, and — through AnswerMemo — an
 * identical tools/call within that time gets the response the McpServer gave the first one.
 */
interface Shared {
  json: string;
  reusableUntil: number;
  result?: CallToolResult;
  /** The output schema it was checked against and passed (checked once, not per call). */
  passed?: object;
}

const shared = new WeakMap<object, Shared>();

export function shareAnswer<T extends object>(structured: T, json: string, reusableUntil: number): T {
  // every call returning the answer marks it again: the first mark (and its result) stays
  if (!shared.has(structured)) shared.set(structured, { json, reusableUntil });
  return structured;
}

/** Whether this is a shared answer that already passed `schema` (see runTool). */
export const passedBefore = (structured: object, schema: object) => shared.get(structured)?.passed === schema;

/** Notes that a shared answer passed `schema`; answers not shared are made anew each call: no note. */
export function notePassed(structured: object, schema: object): void {
  const entry = shared.get(structured);
  if (entry) entry.passed = schema;
}

interface ResultText {
  /** The JSON of the whole tool result. */
  json: string;
  reusableUntil: number;
}

/**
 * Shared results by their text block. The SDK hands the response over as a validated copy of
 * the result; the text, a string it passes through as it is, is what identifies it. Bounded:
 * the oldest entry goes first.
 */
const resultTexts = new Map<string, ResultText>();
const RESULT_TEXTS = 1_000;

/** The tool result of a shared answer (made at its first call), or undefined for any other. */
export function sharedResult(structured: object): CallToolResult | undefined {
  const entry = shared.get(structured);
  if (!entry) return undefined;
  if (!entry.result) {
    entry.result = {
      content: [{ type: 'text', text: entry.json }],
      structuredContent: structured as Record<string, unknown>,
    };
    if (resultTexts.size >= RESULT_TEXTS) resultTexts.delete(resultTexts.keys().next().value as string);
    resultTexts.set(entry.json, {
      json: `{"content":[{"type":"text","text":${JSON.stringify(entry.json)}}],"structuredContent":${entry.json}}`,
      reusableUntil: entry.reusableUntil,
    });
  }
  return entry.result;
}

/**
 * Results a handler returns as the same object every time (the prepared tools/list), with their
 * JSON made once. Handlers other than tools/call hand their result to the transport as it is.
 */
const constantResults = new WeakMap<object, ResultText>();

export function constantResult<T extends object>(result: T): T {
  constantResults.set(result, { json: JSON.stringify(result), reusableUntil: 0 });
  return result;
}

/** The result of a response if it is exactly a shared result: one text block and the structure. */
function sharedResultText(response: JSONRPCMessage): ResultText | undefined {
  if (!('result' in response) || response.jsonrpc !== '2.0' || Object.keys(response).length !== 3) {
    return undefined;
  }
  const result = response.result as Record<string, unknown>;
  const constant = constantResults.get(result);
  if (constant) return constant;
  const { content } = result as { content?: unknown };
  if (!Array.isArray(content) || content.length !== 1) return undefined;
  const block = content[0] as { type?: unknown; text?: unknown };
  if (typeof block.text !== 'string' || block.type !== 'text' || Object.keys(block).length !== 2) {
    return undefined;
  }
  if (result.structuredContent === undefined || Object.keys(result).length !== 2) return undefined;
  return resultTexts.get(block.text);
}

const envelope = (resultJson: string, id: JSONRPCRequest['id']) =>
  `{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

/**
 * A JSON-RPC response as JSON text: what JSON.stringify makes of it, with a shared result's
 * JSON taken as it was made (a test checks that the two agree byte for byte).
 */
export function responseJson(response: JSONRPCMessage): string {
  const text = sharedResultText(response);
  return text ? envelope(text.json, (response as { id: JSONRPCRequest['id'] }).id) : JSON.stringify(response);
}

/** Arguments longer than this as JSON are not worth remembering a call by. */
const MAX_KEY_LENGTH = 4_096;
const MEMO_ENTRIES = 1_000;

/**
 * The responses of tools/call requests answered with a shared result, by tool and arguments,
 * until the result stops being the one to give. Another request naming the same tool with the
 * same arguments (and no _meta: no progress token, no task) within that time is answered with
 * the same result under its own id — what the McpServer answers it anyway, since its input is
 * valid (the first call proved it) and the tool would return the same shared answer.
 */
export class AnswerMemo {
  readonly #entries = new Map<string, ResultText>();

  #key(request: JSONRPCRequest): string | undefined {
    if (request.method !== 'tools/call') return undefined;
    const params = request.params as { name?: unknown; arguments?: unknown } | undefined;
    if (!params || typeof params.name !== 'string') return undefined;
    for (const key in params) if (key !== 'name' && key !== 'arguments') return undefined;
    const key = `${params.name}\n${JSON.stringify(params.arguments ?? {})}`;
    return key.length <= MAX_KEY_LENGTH ? key : undefined;
  }

  /** The response to this request if an identical one was answered with a result still current. */
  answer(request: JSONRPCRequest, now = Date.now()): string | undefined {
    if (this.#entries.size === 0) return undefined;
    const key = this.#key(request);
    const entry = key === undefined ? undefined : this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.reusableUntil <= now) {
      this.#entries.delete(key!);
      return undefined;
    }
    return envelope(entry.json, request.id);
  }

  /** The response as JSON text (see responseJson), remembered for its request when it may be reused. */
  respond(request: JSONRPCRequest, response: JSONRPCMessage, now = Date.now()): string {
    const text = sharedResultText(response);
    if (!text) return JSON.stringify(response);
    const key = text.reusableUntil > now ? this.#key(request) : undefined;
    if (key !== undefined) {
      this.#entries.delete(key);
      if (this.#entries.size >= MEMO_ENTRIES)
        this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, text);
    }
    return envelope(text.json, (response as { id: JSONRPCRequest['id'] }).id);
  }
}
