import { describe, expect, it } from 'vitest';
import { REPORT_ERROR_TYPES, reportFastPath, reportSchema } from './schemas.ts';

const URLS = [
  'https://mcp.example.com/mcp',
  '  https://mcp.example.com/mcp  ',
  'HTTP://Example.COM:8080/a/../b?q=1#f',
  'http://127.0.0.1:9/x',
  'ftp://example.com/x',
  'not a url',
  '',
  '   ',
  `https://example.com/${'a'.repeat(2030)}`,
  `https://example.com/${'a'.repeat(2040)}`,
  'https://exa\u0000mple.com/',
  'javascript:alert(1)',
  'https:',
  42,
  null,
  undefined,
];
const TEXTS = [
  'forecast',
  '  padded  ',
  '',
  '   ',
  'tab\tand\nnewline',
  'bell\u0007',
  'del\u007f',
  'ünïcödé ✓',
  'x'.repeat(128),
  ` ${'x'.repeat(128)} `,
  'x'.repeat(129),
  'x'.repeat(200),
  'x'.repeat(201),
  'x'.repeat(1000),
  'x'.repeat(1001),
  7,
  null,
  true,
  undefined,
];
const NUMBERS = [
  0,
  -0,
  1,
  120,
  99.5,
  100,
  404,
  599,
  600,
  600_000,
  600_001,
  -1,
  1.5,
  1e21,
  '120',
  null,
  true,
  undefined,
];

/** Every field in turn through its edge values, the others fixed: bodies as agents send them. */
function* bodies(): Generator<unknown> {
  const base = { server_url: 'https://mcp.example.com/mcp', success: true };
  yield base;
  yield { ...base, latency_ms: 120, tool_name: 'forecast', agent_id: 'bench-agent' };
  yield {
    ...base,
    success: false,
    latency_ms: 3000,
    error_type: 'timeout',
    error_message: 'took too long',
    http_status: 504,
  };
  for (const server_url of URLS) yield { ...base, server_url };
  for (const success of [true, false, 'true', 1, null, undefined]) yield { ...base, success };
  for (const n of NUMBERS) {
    yield { ...base, latency_ms: n };
    yield { ...base, http_status: n };
  }
  for (const text of TEXTS) {
    yield { ...base, tool_name: text };
    yield { ...base, error_message: text };
    yield { ...base, agent_id: text };
  }
  for (const error_type of [...REPORT_ERROR_TYPES, 'Timeout', '', 'nope', 3, null, undefined])
    yield { ...base, error_type };
  // fields in another order, unknown fields, and what is not an object at all
  yield { agent_id: ' a ', http_status: 200, success: true, server_url: ' https://x.example/mcp ' };
  yield { ...base, extra: 1 };
  yield { ...base, __proto__: { polluted: true } };
  yield Object.assign(Object.create({ inherited: 1 }), base);
  yield { success: true };
  yield { server_url: base.server_url };
  for (const odd of [null, undefined, 'text', 3, [], [base], {}]) yield odd;
}

describe('reportFastPath', () => {
  it('gives exactly what reportSchema gives whenever it answers, and leaves the rest to it', () => {
    const fast = reportFastPath();
    const declined: unknown[] = [];
    for (const body of bodies()) {
      // twice: the second time through the remembered server URL
      for (const _ of [1, 2]) {
        const value = fast.parse(body);
        const checked = reportSchema.safeParse(body);
        if (value === undefined) {
          if (checked.success) declined.push(body);
          continue;
        }
        expect(checked.success, JSON.stringify(body)).toBe(true);
        expect(value).toStrictEqual(checked.data);
        expect(JSON.stringify(value)).toBe(JSON.stringify(checked.data));
      }
    }
    // what it leaves to zod though zod accepts it: only unknown fields (own or inherited) and
    // fields set to undefined
    for (const body of declined) {
      const keys: string[] = [];
      for (const k in body as object) keys.push(k);
      expect(
        keys.some((k) => !reportSchema.keyof().options.includes(k as never)) ||
          keys.some((k) => (body as Record<string, unknown>)[k] === undefined),
        JSON.stringify(body),
      ).toBe(true);
    }
  });

  it('answers the bodies of the bench and of agents without zod', () => {
    const fast = reportFastPath();
    const body = {
      server_url: 'https://mcp.example.com/mcp',
      success: true,
      latency_ms: 120,
      tool_name: 'forecast',
      agent_id: 'bench-agent',
    };
    expect(fast.parse(body)).toEqual(body);
    expect(fast.parse({ ...body, server_url: ' https://mcp.example.com/mcp ' })).toEqual(body);
  });

  it('remembers only accepted server URLs, at most its limit', () => {
    const fast = reportFastPath(3);
    for (const server_url of ['not a url', 'ftp://example.com/', '']) {
      expect(fast.parse({ server_url, success: true })).toBeUndefined();
    }
    expect(fast.rememberedUrls).toBe(0);
    for (let i = 0; i < 5; i++) {
      const server_url = `https://s${i}.example.com/mcp`;
      expect(fast.parse({ server_url, success: true })).toEqual({ server_url, success: true });
    }
    expect(fast.rememberedUrls).toBe(3);
    // forgotten or not, each URL still gives the same value
    for (let i = 0; i < 5; i++) {
      const server_url = `https://s${i}.example.com/mcp`;
      expect(fast.parse({ server_url: ` ${server_url}`, success: false })).toEqual({
        server_url,
        success: false,
      });
    }
    expect(fast.rememberedUrls).toBe(3);
  });
});
