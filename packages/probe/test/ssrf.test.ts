import type { LookupAddress } from 'node:dns';
import { type Fleet, startFleet } from '@observatory/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTargetUrl, type LookupFunction, type ProbeOptions, probe } from '../src/index.ts';
import { createGuardedLookup } from '../src/ssrf-guard.ts';
import { startRawServer } from './raw-server.ts';

// The SSRF guard, flag off. Probes are only ever aimed at loopback forms: a guard that failed
// must not send a packet off this machine. Other private ranges are checked without connecting.

/** A resolver that knows a few test names and nothing else (no real DNS). */
function resolverFor(names: Record<string, string | string[]>): LookupFunction & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname, _options, callback) => {
    calls.push(hostname);
    const found = names[hostname];
    if (found === undefined) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      err.code = 'ENOTFOUND';
      return callback(err, []);
    }
    const list = (Array.isArray(found) ? found : [found]).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    callback(null, list);
  }) as LookupFunction & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

let fleet: Fleet;
let target: string;
beforeAll(async () => {
  fleet = await startFleet();
  target = fleet.add('healthy').url;
});
afterAll(async () => {
  await fleet?.close();
});

const strict: ProbeOptions = { allowPrivateNetworks: false, timeoutMs: 2_000 };

describe('checkTargetUrl', () => {
  it.each([
    'http://127.0.0.1/mcp',
    'http://localhost/mcp',
    'http://10.0.0.1/mcp',
    'http://172.16.0.1/mcp',
    'http://192.168.1.1/mcp',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/',
    'http://[::1]/mcp',
    'http://[::ffff:127.0.0.1]/mcp',
    'http://[::ffff:7f00:1]/mcp',
    'http://[fe80::1]/',
    'http://[fd00::1]/',
    'http://0.0.0.0/mcp',
    'http://0x7f000001/mcp',
    'http://2130706433/mcp',
    'http://0177.0.0.1/mcp',
    'http://127.1/mcp',
    'http://224.0.0.1/',
    'http://[64:ff9b::a9fe:a9fe]/',
  ])('refuses %s', async (url) => {
    const checked = await checkTargetUrl(url, { allowPrivateNetworks: false });
    expect(checked).toMatchObject({ ok: false, code: 'private_address' });
  });

  it('sees numeric IPv4 forms as the address they are (WHATWG URL normalizes them)', () => {
    expect(new URL('http://0x7f000001/').hostname).toBe('127.0.0.1');
    expect(new URL('http://2130706433/').hostname).toBe('127.0.0.1');
    expect(new URL('http://0177.0.0.1/').hostname).toBe('127.0.0.1');
  });

  it('accepts public addresses and names that resolve only to them', async () => {
    expect(await checkTargetUrl('https://93.184.216.34/mcp', { allowPrivateNetworks: false })).toMatchObject({
      ok: true,
    });
    expect(
      await checkTargetUrl('https://[2606:4700:4700::1111]/mcp', { allowPrivateNetworks: false }),
    ).toMatchObject({
      ok: true,
    });
    const lookup = resolverFor({ 'mcp.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
    const checked = await checkTargetUrl('https://MCP.example/mcp', { allowPrivateNetworks: false, lookup });
    expect(checked.ok && checked.url.hostname).toBe('mcp.example');
  });

  it('refuses a name if any of its addresses is private', async () => {
    const lookup = resolverFor({
      'split.example': ['93.184.216.34', '10.1.2.3'],
      'loop.example': '127.0.0.1',
    });
    for (const url of ['https://split.example/', 'https://loop.example/']) {
      const checked = await checkTargetUrl(url, { allowPrivateNetworks: false, lookup });
      expect(checked).toMatchObject({ ok: false, code: 'private_address' });
    }
  });

  it('explains bad schemes, bad URLs, credentials and DNS failures', async () => {
    const opts = { allowPrivateNetworks: false, lookup: resolverFor({}) };
    expect(await checkTargetUrl('ftp://example.com/', opts)).toMatchObject({
      ok: false,
      code: 'scheme_not_allowed',
    });
    expect(await checkTargetUrl('file:///etc/passwd', opts)).toMatchObject({
      ok: false,
      code: 'scheme_not_allowed',
    });
    expect(await checkTargetUrl('javascript:alert(1)', opts)).toMatchObject({
      ok: false,
      code: 'scheme_not_allowed',
    });
    expect(await checkTargetUrl('not a url', opts)).toMatchObject({ ok: false, code: 'invalid_url' });
    expect(await checkTargetUrl('https://u:p@93.184.216.34/', opts)).toMatchObject({
      ok: false,
      code: 'invalid_url',
    });
    const missing = await checkTargetUrl('https://nowhere.invalid/', opts);
    expect(missing).toMatchObject({ ok: false, code: 'dns_failed' });
    expect(!missing.ok && missing.reason).toContain('ENOTFOUND');
  });

  it('lets allowPrivateNetworks through (local fleets and tests)', async () => {
    expect(await checkTargetUrl('http://127.0.0.1:8080/mcp', { allowPrivateNetworks: true })).toMatchObject({
      ok: true,
    });
  });
});

describe('the connect-time guard', () => {
  const lookupThrough = (names: Record<string, string | string[]>, all = true) =>
    new Promise<{ err: Error | null; addresses: unknown }>((resolve) =>
      createGuardedLookup({ allowPrivateNetworks: false, allowedCidrs: [] }, resolverFor(names))(
        'host.test',
        { all },
        (err, addresses) => resolve({ err, addresses }),
      ),
    );

  it.each([
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '::1',
    'fd00::1',
    '::ffff:192.168.0.1',
  ])('refuses a name resolving to %s before any socket exists', async (address) => {
    const { err } = await lookupThrough({ 'host.test': address });
    expect(err).toMatchObject({ code: 'ERR_SSRF_BLOCKED' });
  });

  it('hands net.connect only the addresses it checked', async () => {
    const { err, addresses } = await lookupThrough({ 'host.test': ['93.184.216.34'] });
    expect(err).toBeNull();
    expect(addresses as LookupAddress[]).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it.each([
    ['127.0.0.1', (port: number) => `http://127.0.0.1:${port}`],
    ['localhost', (port: number) => `http://localhost:${port}`],
    ['[::1]', (port: number) => `http://[::1]:${port}`],
    ['[::ffff:127.0.0.1]', (port: number) => `http://[::ffff:127.0.0.1]:${port}`],
    ['0.0.0.0', (port: number) => `http://0.0.0.0:${port}`],
    ['0x7f000001', (port: number) => `http://0x7f000001:${port}`],
    ['2130706433', (port: number) => `http://2130706433:${port}`],
  ])('blocks a probe of %s, and nothing reaches the server', async (_form, base) => {
    const before = fleet.stats().requests;
    const result = await probe(`${base(fleet.port)}/s/1/mcp`, strict);
    expect(result).toMatchObject({ outcome: 'down', error_type: 'ssrf_blocked', http_status: null });
    expect(result.timings.connect_ms).toBeNull();
    expect(fleet.stats().requests).toBe(before);
  });

  it('blocks a name that resolves to loopback', async () => {
    const lookup = resolverFor({ 'innocent.example': '127.0.0.1' });
    const result = await probe(`http://innocent.example:${fleet.port}/s/1/mcp`, { ...strict, lookup });
    expect(result).toMatchObject({ outcome: 'down', error_type: 'ssrf_blocked' });
    expect(result.error_message).toContain('innocent.example resolves to 127.0.0.1');
  });

  it('re-resolves at probe time: a name that passed registration and now points home is blocked', async () => {
    let answer = '93.184.216.34';
    const lookup: LookupFunction = (_host, _options, callback) =>
      callback(null, [{ address: answer, family: 4 }]);
    expect(
      await checkTargetUrl('http://rebind.example/', { allowPrivateNetworks: false, lookup }),
    ).toMatchObject({
      ok: true,
    });
    answer = '127.0.0.1';
    const result = await probe(`http://rebind.example:${fleet.port}/s/1/mcp`, { ...strict, lookup });
    expect(result.error_type).toBe('ssrf_blocked');
  });

  it('connects to the address it checked, keeping the host name for the Host header', async () => {
    // 127.0.0.2 stands in for a public address via allowedCidrs; pinned.example exists in no DNS,
    // so the only way to reach the server is through the address the guard checked.
    let host: string | undefined;
    const server = await startRawServer((req, res) => {
      host = req.headers.host;
      res.writeHead(404).end();
    }, '127.0.0.2');
    try {
      const lookup = resolverFor({ 'pinned.example': '127.0.0.2' });
      const result = await probe(`http://pinned.example:${server.port}/mcp`, {
        ...strict,
        allowedCidrs: ['127.0.0.2/32'],
        lookup,
      });
      expect(result).toMatchObject({ outcome: 'not_mcp', http_status: 404 });
      expect(host).toBe(`pinned.example:${server.port}`);
      expect(lookup.calls.every((name) => name === 'pinned.example')).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('redirects are checked hop by hop', () => {
  it('blocks a "public" server redirecting to a private one, and follows it when allowed', async () => {
    // 127.0.0.2 plays the public server (exempted via allowedCidrs); the fleet on 127.0.0.1 plays
    // the private network it redirects into.
    const redirector = await startRawServer(
      (_req, res) => res.writeHead(307, { location: target }).end(),
      '127.0.0.2',
    );
    try {
      const before = fleet.stats().requests;
      const blocked = await probe(redirector.url, { ...strict, allowedCidrs: ['127.0.0.2/32'] });
      expect(blocked).toMatchObject({ outcome: 'down', error_type: 'ssrf_blocked' });
      expect(fleet.stats().requests).toBe(before);

      const followed = await probe(redirector.url, { ...strict, allowedCidrs: ['127.0.0.0/8'] });
      expect(followed.outcome).toBe('up');
    } finally {
      await redirector.close();
    }
  });

  it('blocks a redirect to a name that resolves to a private address', async () => {
    const lookup = resolverFor({ 'public.example': '127.0.0.2', 'internal.example': '127.0.0.1' });
    const redirector = await startRawServer(
      (_req, res) => res.writeHead(302, { location: `http://internal.example:${fleet.port}/s/1/mcp` }).end(),
      '127.0.0.2',
    );
    try {
      const url = `http://public.example:${redirector.port}/mcp`;
      const result = await probe(url, { ...strict, allowedCidrs: ['127.0.0.2/32'], lookup });
      expect(result).toMatchObject({ outcome: 'down', error_type: 'ssrf_blocked' });
      expect(lookup.calls).toEqual(['public.example', 'internal.example']);
    } finally {
      await redirector.close();
    }
  });
});
