import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  AnswerMemo,
  constantResult,
  responseJson,
  shareAnswer,
  sharedResult,
} from '../src/mcp/shared-answers.ts';

/**
 * Shared answers skip work the SDK path would do per call (serializing, answering a repeat);
 * what they send must be what that work would have produced. Times are passed in: no clock.
 */

const NOW = 1_700_000_000_000;

function answer(url: string, reusableUntil: number) {
  const body = {
    found: true,
    server_url: url,
    trust_score: 71.5,
    verdict: 'PASS',
    metrics: { note: 'a "quoted" \u2028 line' },
  };
  return shareAnswer(body, JSON.stringify(body), reusableUntil);
}

const call = (
  id: JSONRPCRequest['id'],
  args: unknown,
  extra: Record<string, unknown> = {},
): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'check_trust', arguments: args, ...extra } as JSONRPCRequest['params'],
});

/** The response as the McpServer hands it over: a validated copy of the tool result, under the client's id. */
function sdkResponse(structured: object, id: JSONRPCRequest['id']): JSONRPCMessage {
  const result = sharedResult(structured)!;
  const copy = {
    content: result.content.map((block) => ({ ...block })),
    structuredContent: { ...result.structuredContent },
  };
  return { result: copy, jsonrpc: '2.0', id } as JSONRPCMessage;
}

describe('shared MCP answers', () => {
  it('make one tool result per answer, whose text is the JSON it was made with', () => {
    const structured = answer('https://a.example/mcp', NOW + 1_000);
    const result = sharedResult(structured)!;
    expect(sharedResult(structured)).toBe(result);
    // every call returning the answer marks it again; its result stays the one made first
    shareAnswer(structured, JSON.stringify(structured), NOW + 1_000);
    expect(sharedResult(structured)).toBe(result);
    expect(result.structuredContent).toBe(structured);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(structured) }]);
    expect(sharedResult({ other: true })).toBeUndefined();
  });

  it('serialize a response byte for byte as JSON.stringify does', () => {
    const structured = answer('https://b.example/mcp', NOW + 1_000);
    for (const id of [7, 'id-"x"', 0]) {
      const response = sdkResponse(structured, id);
      expect(responseJson(response)).toBe(JSON.stringify(response));
    }
    const listing = constantResult({ tools: [{ name: 'check_trust', inputSchema: { type: 'object' } }] });
    const listed = { result: listing, jsonrpc: '2.0', id: 'list' } as JSONRPCMessage;
    expect(responseJson(listed)).toBe(JSON.stringify(listed));
    const plain = {
      result: { content: [{ type: 'text', text: 'hello' }] },
      jsonrpc: '2.0',
      id: 1,
    } as JSONRPCMessage;
    expect(responseJson(plain)).toBe(JSON.stringify(plain));
    // the text of a shared answer alone, with anything beside it, is not that answer
    const structuredText = JSON.stringify(structured);
    const mixed = {
      result: {
        content: [{ type: 'text', text: structuredText }],
        structuredContent: structured,
        isError: false,
      },
      jsonrpc: '2.0',
      id: 2,
    } as JSONRPCMessage;
    expect(responseJson(mixed)).toBe(JSON.stringify(mixed));
  });

  it('answer an identical call within the answer’s time with the same result under its own id', () => {
    const memo = new AnswerMemo();
    const structured = answer('https://c.example/mcp', NOW + 1_000);
    const args = { server_url: 'https://c.example/mcp' };
    const first = memo.respond(call(1, args), sdkResponse(structured, 1), NOW);
    expect(first).toBe(JSON.stringify(sdkResponse(structured, 1)));

    const again = memo.answer(call('second', args), NOW + 999);
    expect(again).toBe(JSON.stringify(sdkResponse(structured, 'second')));
    // other arguments, another tool, extra params (a progress token) or a later time: not this answer
    expect(memo.answer(call(3, { server_url: 'https://other.example/mcp' }), NOW)).toBeUndefined();
    expect(
      memo.answer({ ...call(4, args), params: { name: 'check_anomaly', arguments: args } }, NOW),
    ).toBeUndefined();
    expect(memo.answer(call(5, args, { _meta: { progressToken: 1 } }), NOW)).toBeUndefined();
    expect(memo.answer(call(6, args), NOW + 1_000)).toBeUndefined();
    // and once expired it is gone
    expect(memo.answer(call(7, args), NOW)).toBeUndefined();
  });

  it('remembers nothing that is not a shared answer still current', () => {
    const memo = new AnswerMemo();
    const args = { server_url: 'https://d.example/mcp' };
    const once = answer('https://d.example/mcp', 0);
    memo.respond(call(1, args), sdkResponse(once, 1), NOW);
    expect(memo.answer(call(2, args), NOW)).toBeUndefined();

    const error = {
      result: { content: [{ type: 'text', text: 'Input validation error' }], isError: true },
      jsonrpc: '2.0',
      id: 3,
    } as JSONRPCMessage;
    expect(memo.respond(call(3, args), error, NOW)).toBe(JSON.stringify(error));
    expect(memo.answer(call(4, args), NOW)).toBeUndefined();

    const listing = { jsonrpc: '2.0', id: 5, method: 'tools/list' } as JSONRPCRequest;
    const current = answer('https://d.example/mcp', NOW + 1_000);
    memo.respond(listing, sdkResponse(current, 5), NOW);
    expect(memo.answer({ ...listing, id: 6 }, NOW)).toBeUndefined();
  });
});
