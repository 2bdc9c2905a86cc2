import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth, in arrays too', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
  });

  it('gives the same text for values already in order and for shuffled copies', () => {
    const inOrder = {
      agent_id: 'a',
      idx: 3,
      payload: { jws: 'x.y.z', score: 91.5, verdict: 'PASS' },
      z: [1, 'two'],
    };
    const shuffled = {
      z: [1, 'two'],
      payload: { verdict: 'PASS', jws: 'x.y.z', score: 91.5 },
      idx: 3,
      agent_id: 'a',
    };
    expect(canonicalJson(inOrder)).toBe(JSON.stringify(inOrder));
    expect(canonicalJson(shuffled)).toBe(JSON.stringify(inOrder));
  });

  it('sorts an object out of order inside one in order, and leaves the input untouched', () => {
    const value = { a: { y: 1, x: 2 }, b: [{ d: 1, c: 2 }], c: 'same' };
    expect(canonicalJson(value)).toBe('{"a":{"x":2,"y":1},"b":[{"c":2,"d":1}],"c":"same"}');
    expect(Object.keys(value.a)).toEqual(['y', 'x']);
    expect(Object.keys(value.b[0]!)).toEqual(['d', 'c']);
  });

  it('drops undefined members and serializes dates as JSON.stringify does', () => {
    const at = new Date('2026-11-22T08:00:00.123Z');
    expect(canonicalJson({ b: undefined, a: at })).toBe('{"a":"2026-11-22T08:00:00.123Z"}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('orders keys by UTF-16 code units, as RFC 8785 does', () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, a: 4 })).toBe('{"B":2,"a":4,"b":1,"é":3}');
  });
});
