import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LookupFunction, type ProbeOptions, probe, probeWithDetails } from '../src/index.ts';
import { INITIALIZE_RESULT, jsonRpcHandler, type RawServer, startRawServer } from './raw-server.ts';

// Answers the fleet does not give: bodies too big or trickling, interleaved event streams,
// redirects, version mismatches, pagination. Real HTTP servers on 127.0.0.1 throughout.

const local: ProbeOptions = { allowPrivateNetworks: true, timeoutMs: 3_000 };
let fleet: Fleet;
const servers: RawServer[] = [];
const raw = async (...args: Parameters<typeof startRawServer>) => {
  const server = await startRawServer(...args);
  servers.push(server);
  return server;
};

beforeAll(async () => {
  fleet = await startFleet();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await fleet?.close();
});

const ok = (id: number | undefined, result: unknown) => ({ jsonrpc: '2.0', id, result });

describe('bounded reading', () => {
  it('a body trickling in just fast enough to dodge idle timeouts still hits the deadline', async () => {
    const server = await raw((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 20);
      res.on('close', () => clearInterval(drip));
    });
    const result = await probe(server.url, { ...local, timeoutMs: 400 });
    expect(result).toMatchObject({ outcome: 'down', error_type: 'timeout' });
  });

  it('an initialize body past maxBodyBytes is not_mcp/body_too_large', async () => {
    const server = await raw((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    });
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'not_mcp', error_type: 'body_too_large' });
  });

  it('a tools/list past maxBodyBytes leaves the server degraded/body_too_large', async () => {
    const result = await probe(fleet.add('healthy').url, { ...local, maxBodyBytes: 400 });
    expect(result).toMatchObject({ outcome: 'degraded', error_type: 'body_too_large', tool_count: null });
  });

  it('keeps error messages to 300 characters', async () => {
    const server = await raw(
      jsonRpcHandler((m) => ({
        jsonrpc: '2.0',
        id: m.id,
        error: { code: -32000, message: 'boom '.repeat(2_000) },
      })),
    );
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'not_mcp', error_type: 'protocol_error' });
    expect(result.error_message!.length).toBeLessThanOrEqual(300);
  });
});

describe('answers MCP servers really give', () => {
  it('takes the matching response out of an event stream full of other traffic', async () => {
    const server = await raw((_req, res, body) => {
      const message = JSON.parse(body) as { id?: number; method: string };
      if (message.id === undefined) return void res.writeHead(202).end();
      const result =
        message.method === 'initialize'
          ? INITIALIZE_RESULT
          : message.method === 'tools/list'
            ? { tools: [] }
            : {};
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': keep-alive comment\n\n');
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } })}\n\n`,
      );
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'srv-1', method: 'roots/list' })}\n\n`);
      res.write(`data: ${JSON.stringify(ok(message.id, result))}\n\n`);
      // The stream stays open: the probe must stop reading once it has its answer.
    });
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'up', protocol_version: '2025-06-18', tool_count: 0 });
  });

  it('records a server that agrees to an unsupported protocol version as degraded', async () => {
    const server = await raw(
      jsonRpcHandler((m) => ok(m.id, { ...INITIALIZE_RESULT, protocolVersion: '1999-01-01' })),
    );
    const result = await probe(server.url, local);
    expect(result).toMatchObject({
      outcome: 'degraded',
      error_type: 'protocol_error',
      protocol_version: '1999-01-01',
    });
    expect(result.timings.ping_ms).toBeNull();
  });

  it('treats a server without the tools capability as having no tools', async () => {
    const server = await raw(
      jsonRpcHandler((m) =>
        ok(m.id, m.method === 'initialize' ? { ...INITIALIZE_RESULT, capabilities: {} } : {}),
      ),
    );
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'up', tool_count: 0, tools: [] });
    expect(result.timings.tools_list_ms).toBeNull();
  });

  it('follows tools/list pagination, and stops at the page bound', async () => {
    const tool = (name: string) => ({ name, inputSchema: { type: 'object' } });
    const paged = await raw(
      jsonRpcHandler((m) => {
        if (m.method === 'initialize') return ok(m.id, INITIALIZE_RESULT);
        if (m.method !== 'tools/list') return ok(m.id, {});
        const page = Number(m.params?.cursor ?? 0);
        return ok(m.id, {
          tools: [tool(`t${page}a`), tool(`t${page}b`)],
          ...(page < 2 ? { nextCursor: String(page + 1) } : {}),
        });
      }),
    );
    const { result } = await probeWithDetails(paged.url, local);
    expect(result).toMatchObject({ outcome: 'up', tool_count: 6 });

    const endless = await raw(
      jsonRpcHandler((m) =>
        ok(
          m.id,
          m.method === 'initialize' ? INITIALIZE_RESULT : { tools: [tool(`t${m.id}`)], nextCursor: 'more' },
        ),
      ),
    );
    const { result: capped, details } = await probeWithDetails(endless.url, local);
    expect(capped).toMatchObject({ outcome: 'up', tool_count: 10 });
    expect(details.tools_truncated).toBe(true);
  });

  it('a tools/list result that is not a valid tool list leaves the server degraded', async () => {
    const server = await raw(
      jsonRpcHandler((m) =>
        ok(m.id, m.method === 'initialize' ? INITIALIZE_RESULT : { tools: [{ name: 'x' }] }),
      ),
    );
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'degraded', error_type: 'tools_list_failed', tool_count: null });
  });

  it('a 403 is auth_required only with a WWW-Authenticate challenge', async () => {
    const bare = await raw((_req, res) => res.writeHead(403).end('Forbidden'));
    expect(await probe(bare.url, local)).toMatchObject({
      outcome: 'not_mcp',
      error_type: 'http_4xx',
      http_status: 403,
    });
    const challenge = await raw((_req, res) =>
      res.writeHead(403, { 'www-authenticate': 'Bearer error="insufficient_scope"' }).end(),
    );
    expect(await probe(challenge.url, local)).toMatchObject({
      outcome: 'auth_required',
      auth_resource_metadata: null,
    });
  });

  it('refuses URLs it cannot probe', async () => {
    expect(await probe('ftp://example.com/mcp', local)).toMatchObject({
      outcome: 'down',
      error_type: 'other',
    });
    expect(await probe('not a url', local)).toMatchObject({ outcome: 'down', error_type: 'other' });
  });
});

describe('redirects', () => {
  it('follows a redirect and keeps talking to where it led', async () => {
    const target = fleet.add('stateful');
    const redirector = await raw((_req, res) => res.writeHead(307, { location: target.url }).end());
    const { result, details } = await probeWithDetails(redirector.url, local);
    expect(result.outcome).toBe('up');
    expect(details).toMatchObject({ redirects: 1, endpoint_url: target.url, session_issued: true });
  });

  it('gives up after three redirects', async () => {
    const loop = await raw((req, res) => res.writeHead(308, { location: `${req.url}x` }).end());
    const result = await probe(loop.url, local);
    expect(result).toMatchObject({ outcome: 'not_mcp', error_type: 'invalid_response' });
    expect(result.error_message).toContain('more than 3 redirects');
  });

  it('does not follow a redirect to a non-HTTP URL', async () => {
    const server = await raw((_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end());
    const result = await probe(server.url, local);
    expect(result).toMatchObject({ outcome: 'not_mcp', error_type: 'invalid_response' });
  });
});

/** A throwaway self-signed certificate, or null where openssl is not installed. */
function selfSignedCert(): { key: Buffer; cert: Buffer } | null {
  const dir = mkdtempSync(join(tmpdir(), 'probe-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
      ].concat(['-subj', '/CN=localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('TLS', () => {
  const credentials = selfSignedCert();

  it.skipIf(!credentials)('an untrusted certificate is down/tls, and SNI carries the host name', async () => {
    let sni: string | undefined;
    const server = createHttpsServer({
      ...credentials!,
      SNICallback: (servername, callback) => {
        sni = servername;
        callback(null, undefined);
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const lookup: LookupFunction = (_host, _options, callback) =>
        callback(null, [{ address: '127.0.0.1', family: 4 }]);
      const result = await probe(`https://tls.example:${port}/mcp`, { ...local, lookup });
      expect(result).toMatchObject({ outcome: 'down', error_type: 'tls', http_status: null });
      expect(sni).toBe('tls.example');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
