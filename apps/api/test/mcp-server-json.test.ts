import { readFileSync } from 'node:fs';
import { MCP_TOOLS, SERVICE_VERSION } from '@observatory/service';
import { describe, expect, it } from 'vitest';

/**
 * server.json (repository root) in the official MCP registry format: the required fields and
 * constraints of the published schema (name, description, version; remotes of a known
 * transport type), and agreement with what the service really is.
 */
const serverJson = JSON.parse(readFileSync(new URL('../../../server.json', import.meta.url), 'utf8'));

describe('server.json', () => {
  it('names a published registry schema', () => {
    expect(serverJson.$schema).toMatch(
      /^https:\/\/static\.modelcontextprotocol\.io\/schemas\/\d{4}-\d{2}-\d{2}\/server\.schema\.json$/,
    );
  });

  it('has the required fields within the schema limits', () => {
    // name: reverse-DNS namespace, exactly one slash, 3-200 characters
    expect(serverJson.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(serverJson.name.length).toBeGreaterThanOrEqual(3);
    expect(serverJson.name.length).toBeLessThanOrEqual(200);
    expect(serverJson.description.length).toBeGreaterThanOrEqual(1);
    expect(serverJson.description.length).toBeLessThanOrEqual(100);
    expect(serverJson.title.length).toBeLessThanOrEqual(100);
    // a specific version, the one /api/info and the MCP initialize answer report
    expect(serverJson.version).toBe(SERVICE_VERSION);
  });

  it('describes the service as a streamable-http remote at /mcp', () => {
    expect(serverJson.remotes).toHaveLength(1);
    const [remote] = serverJson.remotes;
    expect(remote.type).toBe('streamable-http');
    expect(remote.url).toMatch(/^https?:\/\/.+\/mcp$/);
    // every {variable} of the URL template is declared
    for (const [, name] of remote.url.matchAll(/\{([^}]+)\}/g)) {
      expect(remote.variables?.[name], name).toMatchObject({ description: expect.any(String) });
    }
    expect(serverJson.packages).toBeUndefined();
  });

  it('lists the same tools as /api/info', () => {
    expect(serverJson._meta['io.modelcontextprotocol.registry/publisher-provided'].tools).toEqual(
      MCP_TOOLS.map((t) => t.name),
    );
  });
});
