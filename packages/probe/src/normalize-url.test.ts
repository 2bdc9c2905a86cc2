import { describe, expect, it } from 'vitest';
import { normalizeServerUrl } from './normalize-url.ts';

describe('normalizeServerUrl', () => {
  it.each([
    ['HTTPS://Example.COM/mcp', 'https://example.com/mcp'],
    ['https://example.com:443/mcp', 'https://example.com/mcp'],
    ['http://example.com:80/', 'http://example.com'],
    ['https://example.com', 'https://example.com'],
    ['https://example.com/', 'https://example.com'],
    ['https://example.com:8443/mcp', 'https://example.com:8443/mcp'],
    ['https://example.com/mcp/', 'https://example.com/mcp/'],
    ['https://example.com/MCP?key=A&b=1', 'https://example.com/MCP?key=A&b=1'],
    ['https://example.com/mcp#section', 'https://example.com/mcp'],
    ['https://example.com/?x=1', 'https://example.com?x=1'],
    ['https://user:secret@example.com/mcp', 'https://example.com/mcp'],
    ['http://0x7f000001:8080/mcp', 'http://127.0.0.1:8080/mcp'],
    ['https://[0:0:0:0:0:0:0:1]/mcp', 'https://[::1]/mcp'],
    ['https://bücher.example/mcp', 'https://xn--bcher-kva.example/mcp'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeServerUrl(input)).toBe(expected);
  });

  it('throws on something that is not a URL', () => {
    expect(() => normalizeServerUrl('not a url')).toThrow(TypeError);
  });
});
