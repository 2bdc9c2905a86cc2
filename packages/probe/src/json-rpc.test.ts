import { describe, expect, it } from 'vitest';
import { findResponse } from './json-rpc.ts';
import { ProbeFailure } from './probe-failure.ts';

describe('findResponse', () => {
  it('returns a result addressed to the request id', () => {
    expect(findResponse({ jsonrpc: '2.0', id: 3, result: { ok: true } }, 3)).toEqual({
      kind: 'result',
      result: { ok: true },
    });
  });

  it('returns a JSON-RPC error', () => {
    const reply = findResponse(
      { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } },
      2,
    );
    expect(reply).toEqual({ kind: 'error', code: -32601, message: 'Method not found' });
  });

  it('finds the response inside a batch and skips other traffic', () => {
    const batch = [
      { jsonrpc: '2.0', method: 'notifications/message', params: {} },
      { jsonrpc: '2.0', id: 1, result: {} },
    ];
    expect(findResponse(batch, 1)).toEqual({ kind: 'result', result: {} });
    expect(findResponse({ jsonrpc: '2.0', method: 'notifications/progress' }, 1)).toBeNull();
  });

  it('does not take an id of another type ("1" is not 1)', () => {
    expect(findResponse({ jsonrpc: '2.0', id: '1', result: {} }, 1)).toBeNull();
  });

  it('refuses a message with the right id but not JSON-RPC 2.0', () => {
    expect(() => findResponse({ jsonrpc: '1.0', id: 1, result: {} }, 1)).toThrow(ProbeFailure);
    expect(() => findResponse({ jsonrpc: '2.0', id: 1 }, 1)).toThrow(/not a JSON-RPC 2.0 response/);
  });
});
